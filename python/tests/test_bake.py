"""weft.bake: the caches and summary of `weft bake`, progress, formats, the GIL released."""

import threading
import time

import numpy as np
import pytest

import weft
from conftest import EXAMPLES, flag_dict


def test_the_worked_example_lands_at_one_and_a_half_metres(tmp_path):
    summary = weft.bake(EXAMPLES / "seed-soft.toml", tmp_path)
    assert summary["frames"] == 1 and summary["fps"] == 10.0
    assert summary["formats"] == ["pc2"] and summary["files"] == ["seed.pc2"]
    assert summary["scene"] == str((EXAMPLES / "seed-soft.toml").resolve())
    assert {"wall_seconds", "ms_per_frame", "peak_strain", "last_strain"} <= summary.keys()
    cache = weft.read_pc2(tmp_path / "seed.pc2")
    assert cache.dtype == np.float32 and cache.shape == (2, 2, 3)
    assert cache[1].tolist() == [[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]]
    assert (tmp_path / "summary.toml").is_file() and (tmp_path / "stats.csv").is_file()


def test_every_format_and_the_same_samples_in_each(tmp_path, flag):
    summary = weft.bake(flag, tmp_path, formats=("pc2", "usd", "obj"), stats="full")
    assert summary["formats"] == ["pc2", "usd", "obj"]
    assert "flag.pc2" in summary["files"] and "flag.usda" in summary["files"]
    assert "flag.0012.obj" in summary["files"] and "intersecting_pairs" in summary
    pc2 = weft.read_pc2(tmp_path / "flag.pc2")
    obj = weft.read_obj_sequence(tmp_path, "flag")
    assert pc2.shape == obj.shape == (13, 108, 3)
    # The OBJ sequence writes each float as the shortest text that reads back to it.
    assert np.array_equal(pc2.view(np.uint32), obj.view(np.uint32))
    # A comma list is the same as a sequence.
    again = tmp_path / "again"
    weft.bake(flag, again, formats="pc2,obj")
    assert (again / "flag.pc2").read_bytes() == (tmp_path / "flag.pc2").read_bytes()


def test_progress_is_told_of_every_frame(tmp_path, flag):
    told = []
    weft.bake(flag, tmp_path, progress=lambda frame, frames: told.append((frame, frames)))
    assert told == [(k, 12) for k in range(1, 13)]


def test_the_gil_is_released_while_baking(tmp_path):
    # A bake long enough to notice: the demo flag, 90 frames.
    done = threading.Event()
    result = {}

    def run():
        result["summary"] = weft.bake(EXAMPLES / "flag.toml", tmp_path, threads=1)
        done.set()

    baker = threading.Thread(target=run)
    started = time.perf_counter()
    baker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    baker.join()
    elapsed = time.perf_counter() - started
    assert result["summary"]["frames"] == 90
    # This thread ran all along: about one tick per millisecond, never held off for the bake.
    assert ticks > 0.3 * elapsed * 1000, (ticks, elapsed)


def test_threads_do_not_change_the_bytes(tmp_path, flag):
    weft.bake(flag, tmp_path / "one", threads=1)
    weft.bake(flag, tmp_path / "two", threads=2, kernel="scalar")
    assert (tmp_path / "one/flag.pc2").read_bytes() == (tmp_path / "two/flag.pc2").read_bytes()
    assert (tmp_path / "one/stats.csv").read_bytes() == (tmp_path / "two/stats.csv").read_bytes()


def test_a_bake_matches_the_command_lines_bytes(tmp_path, cli):
    scene = tmp_path / "flag.toml"
    weft.Scene.from_dict(flag_dict()).save(scene)
    weft.bake(scene, tmp_path / "module", formats="pc2,usd,obj")
    cli("bake", scene, "--out", tmp_path / "cli", "-f", "pc2,usd,obj", "-q")
    for name in ["flag.pc2", "flag.usda", "flag.0007.obj", "stats.csv"]:
        assert (tmp_path / "module" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
