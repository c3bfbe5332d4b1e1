"""Runs inside Blender (blender -b --factory-startup --python-exit-code 1 --python drape.py --
ADDON_ZIP WORK_DIR [PNG]): installs the add-on from its zip, makes a plane (the cloth) over a
sphere (a collider) above an animated floor (a collider that rises, baked as a point cache),
calls bpy.ops.weft.bake(), and checks that the plane fell and drapes over the sphere and that its
evaluated vertices are the cache weft wrote, float for float. With PNG, renders the draped frame
there (Workbench)."""

import math
import os
import sys

import bmesh
import bpy

argv = sys.argv[sys.argv.index("--") + 1 :]
addon_zip, work = argv[0], argv[1]
png = argv[2] if len(argv) > 2 else None

bpy.ops.preferences.addon_install(filepath=addon_zip, overwrite=True)
bpy.ops.preferences.addon_enable(module="weft_blender")
from weft_blender import export  # noqa: E402 (installed just above)

scene = bpy.context.scene
for name in ("Cube", "Light"):
    if name in bpy.data.objects:
        bpy.data.objects.remove(bpy.data.objects[name])

# The collider: a sphere of radius 0.5 m resting on the ground.
bpy.ops.mesh.primitive_uv_sphere_add(segments=48, ring_count=24, radius=0.5, location=(0.0, 0.0, 0.5))
sphere = bpy.context.active_object
sphere.name = "Ball"
sphere.weft.role = "COLLIDER"
sphere.weft.thickness = 0.01
sphere.weft.friction = 0.6

# The cloth: a 1.6 m plane, cut into 30 × 30 quads, 0.3 m above the sphere, a little turned.
bpy.ops.mesh.primitive_plane_add(size=1.6, location=(0.05, 0.0, 1.3), rotation=(0.0, 0.0, math.radians(10.0)))
plane = bpy.context.active_object
plane.name = "Sheet"
bm = bmesh.new()
bm.from_mesh(plane.data)
bmesh.ops.subdivide_edges(bm, edges=bm.edges[:], cuts=29, use_grid_fill=True)
bm.to_mesh(plane.data)
bm.free()
plane.weft.role = "CLOTH"
rest_world = [plane.matrix_world @ v.co for v in plane.data.vertices]

# An animated collider: a floor that rises from 0.5 m below the ground to the ground.
bpy.ops.mesh.primitive_plane_add(size=6.0, location=(0.0, 0.0, -0.5))
floor = bpy.context.active_object
floor.name = "Floor"
floor.weft.role = "COLLIDER"
floor.keyframe_insert("location", frame=1)
floor.location.z = 0.0
floor.keyframe_insert("location", frame=25)

scene.frame_start, scene.frame_end = 1, 61
scene.render.fps, scene.render.fps_base = 24, 1.0
scene.weft.cache_dir = work

result = bpy.ops.weft.bake()
assert result == {"FINISHED"}, result

mod = plane.modifiers.get("weft")
assert mod is not None and mod.type == "MESH_CACHE" and plane.modifiers[0] == mod, list(plane.modifiers)
assert (mod.cache_format, mod.time_mode, mod.frame_start) == ("PC2", "FRAME", 1.0)
cache = mod.filepath
assert os.path.isfile(cache), cache
text = open(os.path.join(work, "scene.toml"), encoding="utf-8").read()
assert 'animation = "input/collider_Floor.pc2"' in text and "collider_Ball.pc2" not in text, text

# The rest shape did not move in the world when the plane took weft's axes.
now_world = [plane.matrix_world @ v.co for v in plane.data.vertices]
assert max((a - b).length for a, b in zip(rest_world, now_world)) < 1e-6


def evaluated(frame):
    """The plane's evaluated vertices at `frame`: its own coordinates and the world's."""
    scene.frame_set(frame)
    obj = plane.evaluated_get(bpy.context.evaluated_depsgraph_get())
    local = [tuple(v.co) for v in obj.data.vertices]
    return local, [obj.matrix_world @ v.co for v in obj.data.vertices]


for frame in (1, 13, 61):
    local, world = evaluated(frame)
    sample = export.read_pc2_sample(cache, frame - scene.frame_start)
    assert local == sample, f"frame {frame}: the evaluated plane is not the cache"

centre = sphere.matrix_world.translation
if png:
    scene.frame_set(61)
    bpy.ops.object.camera_add(location=(3.2, -3.2, 2.4))
    camera = bpy.context.active_object
    direction = (centre - camera.location).normalized()
    camera.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
    scene.camera = camera
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    plane.color = (0.9, 0.45, 0.15, 1.0)
    for polygon in plane.data.polygons:
        polygon.use_smooth = True
    scene.render.resolution_x, scene.render.resolution_y = 640, 480
    scene.render.image_settings.color_mode = "RGB"
    scene.render.image_settings.compression = 100
    scene.render.filepath = png
    bpy.ops.render.render(write_still=True)


start_local, start = evaluated(1)
assert min(v.z for v in start) > 1.29, "sample 0 is the plane at rest, shown at the first frame"
local, world = evaluated(61)
heights = sorted(v.z for v in world)
top = max(world, key=lambda v: v.z)
corners = world[:4]  # the plane's own four vertices come first
print(f"weft drape: top {top.z:.3f} m at ({top.x:.3f}, {top.y:.3f}); lowest {heights[0]:.3f} m; corners", [f"{c.z:.3f}" for c in corners])
assert 1.0 < top.z < 1.06 and math.hypot(top.x, top.y) < 0.15, "the plane fell onto the sphere's top"
assert max(c.z for c in corners) < 0.7, "its corners hang down around the sphere"
inside = min((v - centre).length for v in world)
assert inside > 0.5 - 0.005, f"no vertex inside the sphere ({inside:.4f} m from its centre)"

# Baking again (nothing changed) goes on from nothing: the same cache, the mesh not moved again.
before = [tuple(v.co) for v in plane.data.vertices]
first = open(cache, "rb").read()
assert bpy.ops.weft.bake() == {"FINISHED"}
assert [tuple(v.co) for v in plane.data.vertices] == before and open(cache, "rb").read() == first

print("weft drape: ok")
