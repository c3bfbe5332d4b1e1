"""Shared fixtures of the weft module's tests: the repository's examples, small scenes, and the
weft command line (to hold the module's bits to the CLI's)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def weft_cli():
    """The weft binary: $WEFT_BIN, else target/release/weft or target/debug/weft of this checkout,
    else `weft` on the PATH; None if there is none."""
    if os.environ.get("WEFT_BIN"):
        return os.environ["WEFT_BIN"]
    for build in ("release", "debug"):
        candidate = REPO / "target" / build / "weft"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("weft")


@pytest.fixture
def cli():
    """Runs the weft command line, skipping the test (saying why) where there is none; CI sets
    WEFT_REQUIRE_CLI=1 so that it fails there instead."""
    binary = weft_cli()
    if binary is None:
        if os.environ.get("WEFT_REQUIRE_CLI") == "1":
            pytest.fail("WEFT_REQUIRE_CLI=1 but no weft binary: build it (cargo build) or set WEFT_BIN")
        pytest.skip("no weft binary (cargo build, or set WEFT_BIN) to compare with")

    def run(*args):
        return subprocess.run([binary, *map(str, args)], check=True, capture_output=True, text=True)

    return run


def flag_dict(frames=12):
    """A small flag held by one corner, baked to a strain tolerance, over a ball: a scene as a
    dict, laid out as a scene file."""
    return {
        "simulation": {"fps": 30.0, "frames": frames, "wind": [1.0, 0.0, 2.0]},
        "cloth": [
            {
                "name": "flag",
                "grid": {"resolution": [12, 9], "size": [1.2, 0.9], "origin": [-0.6, 1.0, -0.45], "plane": "xz"},
                "density": 0.2,
                "stretch_compliance": 1e-6,
                "bending_compliance": 1e-2,
                "drag": 1.0,
                "pin_corners": ["top-left"],
            }
        ],
        "collider": [
            {"name": "ball", "shape": "sphere", "radius": 0.3, "position": [0.1, 0.5, 0.0]},
        ],
    }


@pytest.fixture
def flag():
    return flag_dict()
