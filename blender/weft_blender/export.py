"""A Blender scene as a weft scene: the cloths at rest and the colliders in weft's units and axes.

weft's axes are y up; Blender's are z up. A point at ``(X, Y, Z)`` in Blender's world is at
``(X, Z, -Y)`` in weft's (``TO_WEFT``), and ``AXES`` turns weft's back into Blender's: a 90° turn
about x, the turn Blender's OBJ importer gives an OBJ file (docs/loading.md).

A cloth is simulated in weft's world and played back by a Mesh Cache modifier, which puts the
cache's points into the mesh's own coordinates. So the bake first gives each cloth object the
transform ``AXES`` and moves its rest mesh by the inverse, so that nothing moves in the viewport:
the mesh's coordinates are then weft's world coordinates, and the modifier shows the cache's
points exactly (the same floats).
"""

import json
import math
import os
import re
import struct

import bpy
from mathutils import Matrix

#: weft's axes in Blender's world: weft (x, y, z) is Blender (x, -z, y).
AXES = Matrix(((1.0, 0.0, 0.0, 0.0), (0.0, 0.0, -1.0, 0.0), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)))
#: Blender's world in weft's axes: Blender (X, Y, Z) is weft (X, Z, -Y).
TO_WEFT = AXES.inverted()

#: Where the scene's inputs go, inside the cache folder.
INPUT = "input"
#: Where the bake writes, inside the cache folder.
BAKE = "bake"


class ExportError(Exception):
    """A scene weft cannot take, said in one line for the user."""


def weft_name(name, taken):
    """``name`` as weft allows a cloth or collider to be named (letters, digits, ``-``, ``_``,
    ``.``, not starting with ``.``), unique among ``taken`` (to which it is added)."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "object"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    taken.add(candidate)
    return candidate


def roles(scene):
    """The scene's cloth and collider objects (meshes whose ``weft.role`` says so), in name order."""
    objects = sorted((o for o in scene.objects if o.type == "MESH"), key=lambda o: o.name)
    cloths = [o for o in objects if o.weft.role == "CLOTH"]
    colliders = [o for o in objects if o.weft.role == "COLLIDER"]
    return cloths, colliders


def fit_to_weft_axes(obj):
    """Gives cloth ``obj`` the transform ``AXES``, moving its rest mesh so that it stays where it
    is in the world. A cloth baked before has it already (to the rounding of Blender's rotation,
    about 1e-7), and is left as it is, so that baking again never moves its mesh."""
    to_weft = TO_WEFT @ obj.matrix_world
    identity = Matrix.Identity(4)
    if any(abs(to_weft[i][j] - identity[i][j]) > 1e-6 for i in range(4) for j in range(4)):
        obj.data.transform(to_weft)
        obj.matrix_world = AXES
        obj.data.update()


def fps(scene):
    """The scene's frame rate, 1/s."""
    return scene.render.fps / scene.render.fps_base


def toml_value(value):
    """A Python value as TOML on one line (tables inline)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExportError(f"{value} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


def setting(value):
    """A setting of the add-on (a 32-bit float in Blender) as the decimal it was typed as: its
    shortest text of 7 significant digits (0.02, not 0.019999999552965164)."""
    return float(f"{value:.7g}")


def scene_toml(simulation, cloths, colliders):
    """The scene's text: ``[simulation]``, then each ``[[cloth]]`` and ``[[collider]]``."""
    lines = ["# Written by the weft Blender add-on.", "[simulation]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in simulation.items()]
    for kind, tables in (("cloth", cloths), ("collider", colliders)):
        for table in tables:
            lines += ["", f"[[{kind}]]"] + [f"{k} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def write_obj(path, name, points, faces):
    """An OBJ file of one object: ``points`` (each float written so that it reads back the same)
    and ``faces`` (vertex indices from 0)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"o {name}\n")
        f.writelines(f"v {x!r} {y!r} {z!r}\n" for x, y, z in points)
        f.writelines("f " + " ".join(str(i + 1) for i in face) + "\n" for face in faces)


def write_pc2(path, samples):
    """A PC2 point cache of ``samples`` (each a list of ``(x, y, z)``): start frame 0, one sample
    per frame."""
    points = len(samples[0])
    with open(path, "wb") as f:
        f.write(b"POINTCACHE2\0" + struct.pack("<iiffi", 1, points, 0.0, 1.0, len(samples)))
        for sample in samples:
            f.write(struct.pack(f"<{3 * points}f", *(c for p in sample for c in p)))


def read_pc2_sample(path, k):
    """Sample ``k`` of the PC2 cache at ``path``, as ``(x, y, z)`` tuples of the file's floats."""
    with open(path, "rb") as f:
        head = f.read(32)
        if head[:12] != b"POINTCACHE2\0":
            raise ExportError(f"{path}: not a PC2 file")
        points = struct.unpack("<i", head[16:20])[0]
        f.seek(32 + 12 * points * k)
        values = struct.unpack(f"<{3 * points}f", f.read(12 * points))
    return [values[i : i + 3] for i in range(0, len(values), 3)]


def cloth_table(obj, name, folder):
    """Writes cloth ``obj``'s rest mesh (its own coordinates, which are weft's after
    ``fit_to_weft_axes``) and returns its ``[[cloth]]`` table."""
    mesh = obj.data
    used = set()
    for polygon in mesh.polygons:
        used.update(polygon.vertices)
    loose = len(mesh.vertices) - len(used)
    if not mesh.polygons:
        raise ExportError(f"cloth '{obj.name}' has no faces: weft simulates a cloth's faces")
    if loose:
        raise ExportError(
            f"cloth '{obj.name}': {loose} vertices belong to no face and weft leaves them out, so the "
            "cache would not fit the mesh: delete them (Mesh ▸ Clean Up ▸ Delete Loose)"
        )
    file = f"{INPUT}/cloth_{name}.obj"
    write_obj(os.path.join(folder, file), name, [tuple(v.co) for v in mesh.vertices], [p.vertices for p in mesh.polygons])
    s = obj.weft
    table = {
        "name": name,
        "mesh": file,
        "density": setting(s.density),
        "stretch_compliance": setting(s.stretch_compliance),
        "shear_compliance": setting(s.shear_compliance),
    }
    if s.use_bending:
        table["bending_compliance"] = setting(s.bending_compliance)
    if s.pin_group:
        group = obj.vertex_groups.get(s.pin_group)
        if group is None:
            raise ExportError(f"cloth '{obj.name}': no vertex group '{s.pin_group}' to pin")
        pins = [v.index for v in mesh.vertices for g in v.groups if g.group == group.index and g.weight >= 0.5]
        if pins:
            table["pins"] = pins
    if s.self_collision:
        table["self_collision"] = "triangles"
        table["self_thickness"] = setting(s.self_thickness)
    return table


def collider_shape(obj, depsgraph):
    """Collider ``obj`` as evaluated now (modifiers, animation, parents): its world points in
    weft's axes, and its faces."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        to_weft = TO_WEFT @ evaluated.matrix_world
        points = [tuple(to_weft @ v.co) for v in mesh.vertices]
        faces = [tuple(p.vertices) for p in mesh.polygons]
    finally:
        evaluated.to_mesh_clear()
    return points, faces


def collider_tables(context, colliders, names, folder):
    """Writes every collider at the scene's first frame, and, for one that moves or deforms over
    the frame range, its points at every frame as a PC2 cache; returns their ``[[collider]]``
    tables. Leaves the scene at its first frame."""
    scene = context.scene
    samples = {o.name: [] for o in colliders}
    faces = {}
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        depsgraph = context.evaluated_depsgraph_get()
        for obj in colliders:
            points, obj_faces = collider_shape(obj, depsgraph)
            if samples[obj.name] and len(points) != len(samples[obj.name][0]):
                raise ExportError(f"collider '{obj.name}' changes its vertex count at frame {frame}: weft needs one mesh")
            samples[obj.name].append(points)
            faces.setdefault(obj.name, obj_faces)
    scene.frame_set(scene.frame_start)
    tables = []
    for obj in colliders:
        name = names[obj.name]
        if not faces[obj.name]:
            raise ExportError(f"collider '{obj.name}' has no faces")
        file = f"{INPUT}/collider_{name}.obj"
        write_obj(os.path.join(folder, file), name, samples[obj.name][0], faces[obj.name])
        table = {
            "name": name,
            "shape": "mesh",
            "mesh": file,
            "thickness": setting(obj.weft.thickness),
            "friction": setting(obj.weft.friction),
        }
        if any(s != samples[obj.name][0] for s in samples[obj.name][1:]):
            cache = f"{INPUT}/collider_{name}.pc2"
            write_pc2(os.path.join(folder, cache), samples[obj.name])
            table["animation"] = cache
            table["animation_fps"] = fps(scene)
        tables.append(table)
    return tables


def cache_folder(scene):
    """The cache folder, absolute: the scene's setting (``//`` is the .blend's folder; for a .blend
    never saved, the system's temporary folder)."""
    setting = scene.weft.cache_dir or "//weft_cache"
    if setting.startswith("//") and not bpy.data.filepath:
        import tempfile

        return os.path.join(tempfile.gettempdir(), setting[2:].strip("/") or "weft_cache")
    return os.path.abspath(bpy.path.abspath(setting))


def write_scene(context):
    """Writes the scene for weft into the cache folder: ``scene.toml`` and its inputs. Gives each
    cloth weft's axes first (see the module docs). Returns ``(scene file, bake folder, frames,
    [(cloth object, weft name)])``."""
    scene = context.scene
    cloths, colliders = roles(scene)
    if not cloths:
        raise ExportError("no cloth: set an object's role to Cloth (Properties ▸ Physics ▸ weft)")
    frames = scene.frame_end - scene.frame_start
    if frames < 1:
        raise ExportError("the scene's frame range has a single frame: weft bakes from the first frame to the last")
    folder = cache_folder(scene)
    os.makedirs(os.path.join(folder, INPUT), exist_ok=True)
    scene.frame_set(scene.frame_start)
    taken, names = set(), {}
    cloth_tables = []
    for obj in cloths:
        if obj.animation_data and obj.animation_data.action:
            raise ExportError(
                f"cloth '{obj.name}' has keyframes of its own: a cloth's motion is the bake's; clear them "
                "(Object ▸ Animation ▸ Clear Keyframes)"
            )
    for obj in cloths:
        fit_to_weft_axes(obj)
        names[obj.name] = weft_name(obj.name, taken)
        cloth_tables.append(cloth_table(obj, names[obj.name], folder))
    taken = set()
    for obj in colliders:
        names[obj.name] = weft_name(obj.name, taken)
    g = scene.gravity if scene.use_gravity else (0.0, 0.0, 0.0)
    simulation = {
        "fps": float(fps(scene)),
        "frames": frames,
        "max_strain": setting(scene.weft.max_strain),
        "gravity": [setting(g[0]), setting(g[2]), setting(-g[1])],
        "velocity_damping": setting(scene.weft.velocity_damping),
    }
    collider_list = collider_tables(context, colliders, names, folder)
    path = os.path.join(folder, "scene.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(scene_toml(simulation, cloth_tables, collider_list))
    return path, os.path.join(folder, BAKE), frames, [(obj, names[obj.name]) for obj in cloths]
