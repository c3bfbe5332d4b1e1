"""A bake stopped by Ctrl-C, or by its progress callable raising, keeps its checkpoint, and
resume=True goes on from there to the bytes of a bake that never stopped."""

import subprocess
import sys
from pathlib import Path

import pytest

import weft
from conftest import EXAMPLES


def files(folder: Path):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "summary.toml"}


def test_a_raising_progress_stops_the_bake_and_resume_goes_on(tmp_path):
    scene = EXAMPLES / "flag.toml"
    weft.bake(scene, tmp_path / "whole", formats="pc2,usd")
    out = tmp_path / "parts"

    def stop_at_3(frame, frames):
        if frame == 3:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        weft.bake(scene, out, formats="pc2,usd", progress=stop_at_3)
    left = sorted(p.name for p in out.iterdir())
    assert "weft.checkpoint" in left and "flag.pc2.partial" in left and "flag.pc2" not in left, left
    summary = weft.bake(scene, out, formats="pc2,usd", resume=True)
    assert summary["frames"] == 90
    assert files(out) == files(tmp_path / "whole")


SCRIPT = """
import os, signal, sys, threading
import weft
told = []
# Ctrl-C from outside the bake, a little after it started.
def ctrl_c(frame, frames):
    told.append(frame)
    if frame == 2:
        threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    weft.bake(sys.argv[1], sys.argv[2], progress=ctrl_c)
except KeyboardInterrupt:
    print("interrupted after", max(told))
    sys.exit(0)
print("not interrupted")
sys.exit(1)
"""


def test_ctrl_c_stops_the_bake_with_its_checkpoint_kept(tmp_path):
    scene = EXAMPLES / "flag.toml"
    weft.bake(scene, tmp_path / "whole")
    out = tmp_path / "parts"
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(scene), str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("interrupted after"), run.stdout
    assert (out / "weft.checkpoint").is_file() and not (out / "flag.pc2").exists()
    weft.bake(scene, out, resume=True)
    assert files(out) == files(tmp_path / "whole")
