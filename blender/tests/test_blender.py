"""The Blender add-on in real Blender, headless: a plane as cloth falls onto a sphere as collider
(bpy.ops.weft.bake()), once with the weft module and once with the weft binary.

Skips, saying why, where Blender is absent (or the module, or the binary); CI installs Debian's
blender and sets WEFT_REQUIRE_BLENDER=1, so that there it fails instead of skipping."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
import package  # noqa: E402 (blender/package.py)


def need(what, found):
    if found:
        return found
    if os.environ.get("WEFT_REQUIRE_BLENDER") == "1":
        pytest.fail(f"WEFT_REQUIRE_BLENDER=1 but {what}")
    pytest.skip(what)


def blender():
    return need("no Blender (install it, or set BLENDER to its path)", os.environ.get("BLENDER") or shutil.which("blender"))


def weft_module_folder():
    """The folder the weft module is installed in, for Blender's Python to import it from."""
    try:
        import weft
    except ImportError:
        weft = None
    return need("no weft module (pip install ./python)", weft and str(Path(weft.__file__).resolve().parents[1]))


def weft_binary():
    candidates = [os.environ.get("WEFT_BIN"), REPO / "target/release/weft", REPO / "target/debug/weft"]
    found = next((str(c) for c in candidates if c and Path(c).is_file()), None)
    return need("no weft binary (cargo build, or set WEFT_BIN)", found)


def run_blender(tmp_path, env):
    addon = package.package(tmp_path / "weft_blender.zip")
    png = os.environ.get("WEFT_BLENDER_RENDER")
    args = [blender(), "-b", "--factory-startup", "--python-exit-code", "1", "--python", str(HERE / "drape.py"), "--"]
    args += [str(addon), str(tmp_path / "cache")] + ([png] if png else [])
    clean = {k: v for k, v in os.environ.items() if k not in ("WEFT_PYTHONPATH", "WEFT_BIN", "PYTHONPATH")}
    # The add-on is installed into a folder of the test's own, never the user's Blender.
    own = {"BLENDER_USER_SCRIPTS": str(tmp_path / "scripts"), "BLENDER_USER_CONFIG": str(tmp_path / "config")}
    run = subprocess.run(args, env={**clean, **own, **env}, capture_output=True, text=True, timeout=600)
    log = run.stdout + run.stderr
    assert run.returncode == 0 and "weft drape: ok" in run.stdout, log[-4000:]
    return log


def test_a_plane_drapes_over_a_sphere_baked_with_the_module(tmp_path):
    log = run_blender(tmp_path, {"WEFT_PYTHONPATH": weft_module_folder()})
    assert "with the weft module" in log, log[-2000:]


def test_a_plane_drapes_over_a_sphere_baked_with_the_binary(tmp_path):
    # Blender's Python cannot import weft here (the module's folder is not given), so the add-on
    # runs the binary.
    log = run_blender(tmp_path, {"WEFT_BIN": weft_binary(), "PATH": os.defpath})
    assert "with the weft binary" in log, log[-2000:]
