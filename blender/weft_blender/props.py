"""The add-on's settings: a role and materials per mesh object (``obj.weft``), the bake's settings
per scene (``scene.weft``), and where to find weft (the add-on's preferences)."""

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, PointerProperty, StringProperty

ADDON = __package__


class WeftObjectSettings(bpy.types.PropertyGroup):
    """What a mesh object is to weft, and its material. Units: SI (m, kg, s)."""

    role: EnumProperty(
        name="Role",
        description="What this object is in the bake",
        items=[
            ("NONE", "None", "Not part of the bake"),
            ("CLOTH", "Cloth", "Simulated: baked by weft and played back by a Mesh Cache modifier named weft"),
            ("COLLIDER", "Collider", "Kept out of by the cloth; may be animated or deforming"),
        ],
        default="NONE",
    )
    density: FloatProperty(
        name="Density", description="Mass per area, kg/m²", default=0.2, min=1e-6, soft_max=5.0, precision=3
    )
    stretch_compliance: FloatProperty(
        name="Stretch compliance",
        description="Compliance of the edges, m/N (0: inextensible)",
        default=1e-7,
        min=0.0,
        precision=9,
        step=0.001,
    )
    shear_compliance: FloatProperty(
        name="Shear compliance", description="Compliance of the shear edges, m/N", default=1e-5, min=0.0, precision=7
    )
    use_bending: BoolProperty(name="Bending", description="Resist folding at every interior edge", default=True)
    bending_compliance: FloatProperty(
        name="Bending compliance",
        description="Compliance of bending, rad²/(N·m): larger folds more easily (its effect grows with the frame rate)",
        default=200.0,
        min=0.0,
        soft_max=10000.0,
    )
    pin_group: StringProperty(
        name="Pin group", description="Vertex group whose vertices (weight at least 0.5) are held in place"
    )
    self_collision: BoolProperty(
        name="Self collision", description="Keep the cloth's layers apart (weft's surface self-collision)", default=False
    )
    self_thickness: FloatProperty(
        name="Self thickness", description="Distance kept between layers, m", default=0.004, min=1e-5, precision=4,
        unit="LENGTH",
    )
    thickness: FloatProperty(
        name="Thickness", description="Distance the cloth is kept from this collider, m", default=0.01, min=1e-5,
        precision=4, unit="LENGTH",
    )
    friction: FloatProperty(name="Friction", description="Coulomb friction coefficient", default=0.5, min=0.0, soft_max=2.0)


class WeftSceneSettings(bpy.types.PropertyGroup):
    """How the scene bakes: the frame range and rate are the scene's own."""

    cache_dir: StringProperty(
        name="Cache folder",
        description="Where the scene, its inputs and the baked caches are written (// is the .blend's folder)",
        default="//weft_cache",
        subtype="DIR_PATH",
    )
    max_strain: FloatProperty(
        name="Max strain",
        description="Each frame takes as many substeps as keep every edge within this stretch (0.02: 2 %)",
        default=0.02,
        min=1e-4,
        max=1.0,
        precision=3,
    )
    velocity_damping: FloatProperty(
        name="Air damping", description="Velocity damping, 1/s", default=1.0, min=0.0, soft_max=10.0
    )


class WeftPreferences(bpy.types.AddonPreferences):
    """Where weft is: the Python module (a folder holding the ``weft`` package) or the binary."""

    bl_idname = ADDON

    module_path: StringProperty(
        name="weft module folder",
        description="A folder holding the weft Python package (pip install --target FOLDER ./python); "
        "empty: Blender's own Python, or $WEFT_PYTHONPATH",
        subtype="DIR_PATH",
    )
    binary: StringProperty(
        name="weft binary",
        description="The weft command line, used when the module is not found; empty: $WEFT_BIN, or weft on the PATH",
        subtype="FILE_PATH",
    )

    def draw(self, context):
        self.layout.prop(self, "module_path")
        self.layout.prop(self, "binary")


CLASSES = [WeftObjectSettings, WeftSceneSettings, WeftPreferences]


def attach():
    bpy.types.Object.weft = PointerProperty(type=WeftObjectSettings)
    bpy.types.Scene.weft = PointerProperty(type=WeftSceneSettings)


def detach():
    del bpy.types.Scene.weft
    del bpy.types.Object.weft


def preferences():
    """The add-on's preferences, or None when it is not installed as ``weft_blender``."""
    addon = bpy.context.preferences.addons.get(ADDON)
    return addon.preferences if addon else None
