"""Imports one frame of a weft OBJ sequence into Blender, headless, and checks it as a user would
see it. Run by tests/suite/import_tools.rs as

    blender -b --factory-startup --python-exit-code 1 --python check_blender.py -- FILE NAME POINTS SIZE

(FILE: the OBJ frame; NAME: the cloth; POINTS: its vertices; SIZE: the corners of every face).
Prints one line per failed check and exits 1, or prints `weft-blender-ok`.
"""
import sys

import bpy

path, name, points, size = sys.argv[sys.argv.index("--") + 1 :]
points, size = int(points), int(size)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


# An empty scene (the factory startup has a cube).
bpy.ops.wm.read_factory_settings(use_empty=True)
# Forward +y, up +z: Blender's own axes, so the file's coordinates come in unchanged.
if hasattr(bpy.ops.wm, "obj_import"):
    bpy.ops.wm.obj_import(filepath=path, forward_axis="Y", up_axis="Z")
else:
    bpy.ops.import_scene.obj(filepath=path, axis_forward="Y", axis_up="Z")

meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
check(len(meshes) == 1, f"{len(meshes)} mesh objects, expected 1")
obj = meshes[0]
check(obj.name == name, f"the object is named '{obj.name}', expected '{name}' (the `o` line)")
mesh = obj.data
check(len(mesh.vertices) == points, f"{len(mesh.vertices)} vertices, expected {points}")
sizes = sorted({p.loop_total for p in mesh.polygons})
check(sizes == [size], f"face sizes {sizes}, expected all {size}")
smooth = all(p.use_smooth for p in mesh.polygons)
custom = mesh.has_custom_normals
check(smooth or custom, "neither smooth-shaded nor custom normals: the cloth shows faceted")

# The normals Blender shades with, per face corner, against the `vn` lines of the file.
# Matched by position, so that the check does not rely on Blender keeping the file's order.
v, vn = [], []
with open(path) as f:
    for line in f:
        words = line.split()
        if words[:1] == ["v"]:
            v.append(tuple(float(x) for x in words[1:4]))
        elif words[:1] == ["vn"]:
            vn.append(tuple(float(x) for x in words[1:4]))
check(len(vn) == points, f"{len(vn)} vn lines, expected {points}")


def key(p):
    return tuple(round(c, 5) for c in p)


normal_at = {key(p): n for p, n in zip(v, vn)}
if hasattr(mesh, "calc_normals_split"):
    mesh.calc_normals_split()
    corner = [tuple(l.normal) for l in mesh.loops]
else:
    corner = [tuple(n.vector) for n in mesh.corner_normals]
worst = 1.0
for loop, n in zip(mesh.loops, corner):
    want = normal_at.get(key(mesh.vertices[loop.vertex_index].co), (0.0, 0.0, 0.0))
    worst = min(worst, sum(a * b for a, b in zip(n, want)))
check(worst > 0.999, f"Blender's corner normals differ from weft's: smallest cosine {worst:.4f}")

for f in failures:
    print(f"weft-blender-failed: {f}")
if failures:
    sys.exit(1)
print("weft-blender-ok")
