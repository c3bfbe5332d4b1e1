"""weft.Simulation: stepped frame by frame through the very positions a bake writes; numpy
state; colliders and pins moved between frames."""

import numpy as np
import pytest

import weft
from conftest import EXAMPLES, flag_dict


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def test_positions_frame_by_frame_are_the_caches_bit_for_bit(tmp_path, cli):
    # The demo flag, baked to a strain tolerance: counts chosen per frame, tethers.
    scene = EXAMPLES / "flag.toml"
    cli("bake", scene, "--out", tmp_path / "cli", "-q")
    cache = weft.read_pc2(tmp_path / "cli" / "flag.pc2")
    sim = weft.Simulation(scene)
    assert sim.cloths == ["flag"] and sim.frames == 90 and sim.frame == 0
    first = sim.positions("flag")
    assert first.dtype == np.float32 and first.shape == (48 * 32, 3)
    assert np.array_equal(bits(first), bits(cache[0]))
    counts = set()
    for k in range(1, 31):
        counts.add(sim.substeps)
        sim.step()
        assert np.array_equal(bits(sim.positions("flag")), bits(cache[k])), f"frame {k}"
    assert sim.frame == 30 and sim.time == pytest.approx(1.0)
    assert len(counts) > 1, "the substep counts were chosen frame by frame"


def test_several_frames_at_once_and_any_thread_count(tmp_path, flag):
    weft.bake(flag, tmp_path)
    cache = weft.read_pc2(tmp_path / "flag.pc2")
    sim = weft.Simulation(flag, threads=2)
    sim.step(frames=12)
    assert np.array_equal(bits(sim.positions()), bits(cache[12]))
    velocities = sim.velocities("flag")
    assert velocities.dtype == np.float32 and velocities.shape == (108, 3)
    assert np.abs(velocities).max() > 0.0
    assert sim.pins("flag") == [96]


def test_a_moved_collider_carries_the_cloth():
    # A sheet lying on a box; the box rises 10 cm over each of 5 frames, and the sheet with it.
    scene = {
        "simulation": {"fps": 30.0, "frames": 10, "substeps": 8, "iterations": 4},
        "cloth": [
            {
                "name": "sheet",
                "grid": {"resolution": [5, 5], "size": [0.4, 0.4], "origin": [-0.2, 0.206, -0.2], "plane": "xz"},
                "density": 0.2,
            }
        ],
        "collider": [{"name": "box", "shape": "box", "half_extents": [0.5, 0.1, 0.5], "position": [0.0, 0.1, 0.0]}],
    }
    sim = weft.Simulation(scene)
    sim.step(2)
    resting = sim.positions()[:, 1].mean()
    assert resting == pytest.approx(0.205, abs=2e-3)
    for k in range(1, 6):
        sim.move_collider("box", [0.0, 0.1 + 0.1 * k, 0.0])
        sim.step()
    assert sim.positions()[:, 1].min() > resting + 0.45
    with pytest.raises(weft.WeftError, match="no collider is named 'bx' \\(the colliders: box\\)"):
        sim.move_collider("bx", [0.0, 0.0, 0.0])
    with pytest.raises(weft.WeftError, match="is not a finite number"):
        sim.move_collider("box", [float("nan"), 0.0, 0.0])


def test_moved_pins_reach_their_targets_at_the_frames_end(flag):
    sim = weft.Simulation(flag)
    pin = sim.pins("flag")[0]
    start = sim.positions("flag")[pin].copy()
    target = start + np.array([0.3, 0.1, 0.0], dtype=np.float32)
    sim.move_pins("flag", [pin], [target])
    sim.step()
    assert np.array_equal(sim.positions("flag")[pin], target)
    sim.step()
    assert np.array_equal(sim.positions("flag")[pin], target), "held there after"
    with pytest.raises(weft.WeftError, match="particle 0 of cloth 'flag' is not pinned"):
        sim.move_pins("flag", [0], [[0.0, 0.0, 0.0]])
    with pytest.raises(weft.WeftError, match="1 indices and 2 positions"):
        sim.move_pins("flag", [pin], [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
