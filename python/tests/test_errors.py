"""Every bad input raises weft.WeftError, a ValueError, with weft's one-line message."""

import pytest

import weft
from conftest import EXAMPLES, flag_dict


def one_line_error(call):
    with pytest.raises(weft.WeftError) as e:
        call()
    assert isinstance(e.value, ValueError)
    message = str(e.value)
    assert "\n" not in message and message
    return message


def test_bad_scenes(tmp_path, flag):
    missing = tmp_path / "nowhere.toml"
    assert one_line_error(lambda: weft.Scene(missing)).startswith(f"{missing}: cannot read the scene file")
    bad = tmp_path / "bad.toml"
    bad.write_text("[simulation]\nfps = 30\nframs = 3\n")
    assert one_line_error(lambda: weft.Scene(bad)) == (
        f"{bad}:3:1: unknown field `frams` (did you mean `frames`?), expected one of `fps`, `frames`, "
        "`substeps`, `iterations`, `gravity`, `velocity_damping`, `wind`, `air_density`, `max_strain`, "
        "`min_substeps`, `max_substeps`"
    )
    flag["cloth"][0]["stretch_compliance"] = -1.0
    message = one_line_error(lambda: weft.Scene.from_dict(flag).validate())
    assert message.endswith("cloth 'flag': stretch_compliance: -1 must not be negative"), message
    assert message.startswith("<dict>:")
    # A rule of the model, found when it is built.
    flag["cloth"][0]["stretch_compliance"] = 0.0
    flag["cloth"][0]["pins"] = [500]
    assert "pins[0]" in one_line_error(lambda: weft.Simulation(flag))
    assert "cannot be a scene value" in one_line_error(lambda: weft.Scene.from_dict({"simulation": {"fps": object()}}))
    assert "give a weft.Scene" in one_line_error(lambda: weft.bake(3.5, tmp_path))


def test_bad_arguments(tmp_path):
    seed = EXAMPLES / "seed.toml"
    assert one_line_error(lambda: weft.bake(seed, tmp_path, formats=["pc3"])) == (
        "unknown cache format 'pc3': use pc2, usd or obj"
    )
    assert "use simd or scalar" in one_line_error(lambda: weft.bake(seed, tmp_path, kernel="avx"))
    assert "use full, light or off" in one_line_error(lambda: weft.bake(seed, tmp_path, stats="most"))
    assert "no cloth is named 'sed'" in one_line_error(lambda: weft.Simulation(seed).positions("sed"))
    assert "no file flag.0000.obj" in one_line_error(lambda: weft.read_obj_sequence(tmp_path, "flag"))
    not_pc2 = tmp_path / "x.pc2"
    not_pc2.write_bytes(b"POINTCACHE3\0" + bytes(20))
    assert one_line_error(lambda: weft.read_pc2(not_pc2)).startswith(f"{not_pc2}: not a PC2 file")
    assert "cannot create the output directory" in one_line_error(lambda: weft.bake(seed, not_pc2 / "out"))
