"""weft for Blender: bake cloth with weft, the XPBD cloth baker, from Blender's Physics tab.

Mark mesh objects as cloth or collider (Properties ▸ Physics ▸ weft), then Bake: the add-on
writes the scene (the cloths at rest, the colliders, an animated or deforming collider as a point
cache, in weft's units and axes), runs the bake with the ``weft`` Python module or the ``weft``
binary, and plays the result back with a Mesh Cache modifier named ``weft`` on each cloth.
See docs/blender.md in the weft repository.
"""

bl_info = {
    "name": "weft cloth",
    "author": "the weft authors",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "Properties ▸ Physics ▸ weft",
    "description": "Bake cloth with weft (XPBD) and play it back with a Mesh Cache modifier",
    "category": "Physics",
}

if "bpy" in locals():
    import importlib

    for _module in (props, export, runner, ops, ui):  # noqa: F821 (reloaded modules)
        importlib.reload(_module)
else:
    from . import export, ops, props, runner, ui

import bpy

_classes = props.CLASSES + ops.CLASSES + ui.CLASSES


def register():
    for cls in _classes:
        bpy.utils.register_class(cls)
    props.attach()


def unregister():
    props.detach()
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
