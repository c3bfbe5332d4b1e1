"""Blender's own cloth on weft's drop sheet (drop_sheet.toml), for the side-by-side of compare.py.

Run inside Blender, headless:

    blender -b --factory-startup -t 2 --python benches/blender/blender_cloth.py -- --out result.json

It builds the scene of drop_sheet.toml in an empty Blender scene — the same 64 × 64 grid (as
quads) at the same place, the same mass per vertex, a UV sphere for the ball and a plane for the
floor, each with a Collision modifier — gives the sheet a Cloth modifier (quality 5 steps per
frame, Blender's default stiffness 15 and bending 0.5, air damping 0: Blender's air drag ignores
the mass, so a light cloth with it would float; collision and self-collision distances 4 mm), then
steps frames 1 to 91 (90 frames at 30 fps), timing only the simulation. Afterwards it reads each
frame back from the cloth's cache and measures what compare.py reports for weft too: the largest
stretch of a grid edge (|x_a − x_b|/L − 1, 0 if none is longer) and the pairs of triangles that
cross (each quad cut into two triangles; pairs that share a vertex do not count), with Blender's
own BVH overlap test. The result is a JSON file.

weft's axes are y up, Blender's z up: a weft point (x, y, z) is Blender's (x, −z, y).
"""

import argparse
import json
import math
import sys
import time

import bpy
import mathutils
from mathutils.bvhtree import BVHTree


def parse_args():
    argv = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="where to write the JSON result")
    p.add_argument("--resolution", type=int, default=64, help="particles along each side")
    p.add_argument("--size", type=float, default=1.2, help="side of the sheet, m")
    p.add_argument("--height", type=float, default=0.9, help="height of the sheet, m")
    p.add_argument("--density", type=float, default=0.15, help="kg/m²")
    p.add_argument("--frames", type=int, default=90)
    p.add_argument("--fps", type=int, default=30)
    p.add_argument("--quality", type=int, default=5, help="Blender's cloth steps per frame")
    p.add_argument("--stiffness", type=float, default=15.0, help="tension, compression and shear")
    p.add_argument("--distance", type=float, default=0.004, help="collision distance, m")
    p.add_argument("--self-distance", type=float, default=0.004, help="self-collision distance, m")
    p.add_argument("--no-measure", action="store_true", help="time only")
    return p.parse_args(argv)


def blender_point(x, y, z):
    """weft (x, y, z), y up, as Blender's (x, y, z), z up."""
    return (x, -z, y)


def empty_scene(fps, frames):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = fps
    scene.frame_start = 1
    scene.frame_end = frames + 1
    scene.gravity = (0.0, 0.0, -9.81)
    return scene


def sheet(args):
    n, d = args.resolution, args.size / (args.resolution - 1)
    verts = [
        blender_point(-args.size / 2 + i * d, args.height, -args.size / 2 + j * d)
        for j in range(n)
        for i in range(n)
    ]
    quads = [
        (j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i)
        for j in range(n - 1)
        for i in range(n - 1)
    ]
    mesh = bpy.data.meshes.new("sheet")
    mesh.from_pydata(verts, [], quads)
    mesh.update()
    obj = bpy.data.objects.new("sheet", mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj, verts, quads


def collider(obj, distance):
    obj.modifiers.new("Collision", "COLLISION")
    obj.collision.thickness_outer = distance
    return obj


def ball(distance):
    bpy.ops.mesh.primitive_uv_sphere_add(
        segments=48, ring_count=24, radius=0.2, location=blender_point(0.12, 0.45, 0.05)
    )
    bpy.ops.object.shade_smooth()
    return collider(bpy.context.active_object, distance)


def floor(distance):
    bpy.ops.mesh.primitive_plane_add(size=10.0, location=(0.0, 0.0, 0.0))
    return collider(bpy.context.active_object, distance)


def cloth(obj, args, mass):
    mod = obj.modifiers.new("Cloth", "CLOTH")
    s = mod.settings
    s.quality = args.quality
    s.mass = mass
    s.air_damping = 0.0
    s.tension_stiffness = s.compression_stiffness = s.shear_stiffness = args.stiffness
    c = mod.collision_settings
    c.use_collision = True
    c.distance_min = args.distance
    c.use_self_collision = True
    c.self_distance_min = args.self_distance
    cache = mod.point_cache
    cache.frame_start = 1
    cache.frame_end = args.frames + 1
    return mod


def positions(obj):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    points = [mathutils.Vector(v.co) for v in mesh.vertices]
    evaluated.to_mesh_clear()
    return points


def stretch(points, edges, rest):
    worst = 0.0
    for (a, b), length in zip(edges, rest):
        worst = max(worst, (points[a] - points[b]).length / length - 1.0)
    return worst


def crossing_pairs(points, triangles):
    tree = BVHTree.FromPolygons(points, triangles, all_triangles=True)
    pairs = 0
    for i, j in tree.overlap(tree):
        if i < j and not set(triangles[i]) & set(triangles[j]):
            pairs += 1
    return pairs


def main():
    args = parse_args()
    scene = empty_scene(args.fps, args.frames)
    obj, verts, quads = sheet(args)
    area = args.size * args.size
    mass = args.density * area / len(verts)
    ball(args.distance)
    floor(args.distance)
    cloth(obj, args, mass)
    edges = sorted({tuple(sorted((q[k], q[(k + 1) % 4]))) for q in quads for k in range(4)})
    rest = [
        (mathutils.Vector(verts[a]) - mathutils.Vector(verts[b])).length for a, b in edges
    ]
    triangles = [t for q in quads for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))]

    scene.frame_set(1)
    start = time.perf_counter()
    for frame in range(2, args.frames + 2):
        scene.frame_set(frame)
    seconds = time.perf_counter() - start

    per_frame = []
    if not args.no_measure:
        for frame in range(1, args.frames + 2):
            scene.frame_set(frame)
            p = positions(obj)
            per_frame.append(
                {
                    "frame": frame - 1,
                    "time": (frame - 1) / args.fps,
                    "max_stretch": stretch(p, edges, rest),
                    "crossing_pairs": crossing_pairs(p, triangles),
                    "lowest": min(v.z for v in p),
                }
            )
    result = {
        "solver": "blender " + bpy.app.version_string,
        "frames": args.frames,
        "ms_per_frame": 1000.0 * seconds / args.frames,
        "mass_per_vertex_kg": mass,
        "quality": args.quality,
        "stiffness": args.stiffness,
        "per_frame": per_frame,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"blender: {result['ms_per_frame']:.1f} ms/frame over {args.frames} frames")


main()
