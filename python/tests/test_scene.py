"""weft.Scene: from a file, a wedge variant, a dict, with overrides; validate() as data."""

import pytest

import weft
from conftest import EXAMPLES, flag_dict


def test_a_scene_file_as_written():
    scene = weft.Scene(EXAMPLES / "drape_sphere.toml")
    assert scene.cloths == ["sheet"] and scene.colliders == ["ball", "floor"]
    assert (scene.fps, scene.frames) == (60.0, 180)
    assert scene.variant is None and "[[cloth]]" in scene.text
    assert scene.path == EXAMPLES / "drape_sphere.toml"


def test_validate_is_what_weft_validate_prints(cli):
    scene = weft.Scene(EXAMPLES / "drape_sphere.toml")
    report = scene.validate()
    assert report["ok"] is True
    assert report["particles"] == 625 and report["pinned"] == 0
    assert report["cloths"] == [
        {"name": "sheet", "particles": 625, "pinned": 0, "triangles": 1152, "render_vertices": None}
    ]
    assert [c["shape"] for c in report["colliders"]] == ["sphere", "plane"]
    assert report["simulation"]["tolerance"] == {"max_strain": pytest.approx(0.02), "min_substeps": 4, "max_substeps": 128}
    assert report["constraints"]["distance"] == report["constraints"]["stretch"] + report["constraints"]["shear"]
    assert report["memory"]["model_bytes"] > 0 and report["intersecting_pairs"] == 0
    printed = cli("validate", EXAMPLES / "drape_sphere.toml").stdout
    assert f"particles:      {report['particles']} ({report['pinned']} pinned)" in printed
    distance = report["solve"]["distance"]
    row = [line for line in printed.splitlines() if line.split()[:1] == ["distance"]][0].split()
    assert [int(row[1]), int(row[2]), int(row[3])] == [
        distance["constraints"],
        distance["blocks"],
        distance["colours_per_block"],
    ]
    assert f"{report['work']['time_steps']} time steps" in printed
    # The garment's four blocks leave three cuts, each a strand of the constraints across blocks.
    garment = weft.Scene(EXAMPLES / "garment.toml").validate()["solve"]["bending"]
    printed = cli("validate", EXAMPLES / "garment.toml").stdout
    row = [line for line in printed.splitlines() if line.split()[:1] == ["bending"]][0].split()
    across = [int(row[4]), int(row[6].rstrip(",")), int(row[7].rstrip(")"))]
    assert across == [garment["across_blocks"], garment["across_block_strands"], garment["across_block_colours"]]
    assert garment["across_block_strands"] == 3 and garment["across_block_colours"] == 0


def test_validate_warns_of_particle_contacts_thinner_than_the_vertex_spacing(flag):
    thin = weft.Scene.from_dict(
        flag, overrides={"cloth.flag.self_collision": True, "cloth.flag.self_thickness": 0.001}
    ).validate()["particle_self_collision"]
    assert thin["particles"] > 0 and thin["max_thickness"] == pytest.approx(0.001)
    assert len(thin["warnings"]) == 1 and thin["warnings"][0].startswith('cloth "flag": self_thickness 0.001 m')
    assert 'self_collision = "triangles"' in thin["warnings"][0]
    thick = weft.Scene.from_dict(
        flag, overrides={"cloth.flag.self_collision": True, "cloth.flag.self_thickness": 0.1}
    ).validate()["particle_self_collision"]
    assert thick["warnings"] == []
    assert weft.Scene.from_dict(flag).validate()["particle_self_collision"] is None


def test_a_wedge_variant_and_the_list_of_them():
    variants = weft.Scene.variants(EXAMPLES / "wedge.toml")
    assert [v["index"] for v in variants] == [0, 1, 2, 3]
    assert variants[2]["name"] == "w002_stretch_compliance=0.0001_bending_compliance=0.001"
    scene = weft.Scene(EXAMPLES / "wedge.toml", variant=2)
    assert scene.variant["values"] == {
        "cloth.curtain.stretch_compliance": 1e-4,
        "cloth.curtain.bending_compliance": 1e-3,
    }
    assert weft.Scene.variants(EXAMPLES / "flag.toml") == []


def test_a_scene_from_a_dict_bakes_as_its_file(tmp_path, flag):
    scene = weft.Scene.from_dict(flag)
    assert scene.cloths == ["flag"] and scene.colliders == ["ball"] and str(scene.path) == "<dict>"
    file = tmp_path / "flag.toml"
    scene.save(file)
    weft.bake(scene, tmp_path / "dict")
    weft.bake(file, tmp_path / "file")
    assert (tmp_path / "dict/flag.pc2").read_bytes() == (tmp_path / "file/flag.pc2").read_bytes()


def test_overrides_change_the_keys_they_name(tmp_path, flag):
    scene = weft.Scene.from_dict(
        flag,
        overrides={
            "simulation.frames": 3,
            "cloth.flag.stretch_compliance": 1e-4,
            "cloth.flag.grid.resolution": [6, 5],
            "collider.ball.friction": 0.5,
        },
    )
    assert scene.frames == 3
    report = scene.validate()
    assert report["particles"] == 30
    assert report["colliders"][0]["static_friction"] == pytest.approx(0.5)
    assert "stretch_compliance = 0.0001" in scene.text and "[wedge]" not in scene.text
    # The scene with its overrides, saved, is the same scene.
    scene.save(tmp_path / "s.toml")
    assert weft.Scene(tmp_path / "s.toml").validate()["particles"] == 30
    # Overrides of a file, and the summary of a bake records them.
    file = tmp_path / "flag.toml"
    weft.Scene.from_dict(flag).save(file)
    summary = weft.bake(weft.Scene(file, overrides={"simulation.frames": 2}), tmp_path / "out")
    assert summary["frames"] == 2 and summary["wedge"] == {"simulation.frames": 2}


def test_a_misspelt_override_names_the_near_key(flag):
    with pytest.raises(weft.WeftError) as e:
        weft.Scene.from_dict(flag, overrides={"cloth.flag.stretch_compliace": 1e-4})
    assert "(did you mean `stretch_compliance`?)" in str(e.value)
    with pytest.raises(weft.WeftError, match="no \\[\\[cloth\\]\\] is named 'flog'"):
        weft.Scene.from_dict(flag, overrides={"cloth.flog.density": 0.3})


def test_overrides_and_a_wedge_of_the_scenes_own():
    with pytest.raises(weft.WeftError, match="has its own \\[wedge\\]"):
        weft.Scene(EXAMPLES / "wedge.toml", overrides={"simulation.frames": 2})
    with pytest.raises(weft.WeftError, match="not both"):
        weft.Scene(EXAMPLES / "wedge.toml", overrides={"simulation.frames": 2}, variant=1)
