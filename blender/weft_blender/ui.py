"""The weft panel: Properties ▸ Physics, for mesh objects."""

import bpy


class WEFT_PT_physics(bpy.types.Panel):
    bl_label = "weft"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == "MESH"

    def draw(self, context):
        layout = self.layout
        obj = context.object
        s = obj.weft
        layout.use_property_split = True
        layout.prop(s, "role", expand=True)
        if s.role == "CLOTH":
            col = layout.column()
            col.prop(s, "density")
            col.prop(s, "stretch_compliance")
            col.prop(s, "shear_compliance")
            row = col.row(heading="Bending")
            row.prop(s, "use_bending", text="")
            sub = row.row()
            sub.active = s.use_bending
            sub.prop(s, "bending_compliance", text="")
            col.prop_search(s, "pin_group", obj, "vertex_groups")
            row = col.row(heading="Self Collision")
            row.prop(s, "self_collision", text="")
            sub = row.row()
            sub.active = s.self_collision
            sub.prop(s, "self_thickness", text="")
        elif s.role == "COLLIDER":
            col = layout.column()
            col.prop(s, "thickness")
            col.prop(s, "friction")


class WEFT_PT_bake(bpy.types.Panel):
    bl_label = "Bake"
    bl_parent_id = "WEFT_PT_physics"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        settings = context.scene.weft
        layout.prop(settings, "cache_dir")
        layout.prop(settings, "max_strain")
        layout.prop(settings, "velocity_damping")
        scene = context.scene
        layout.label(text=f"Frames {scene.frame_start} to {scene.frame_end} at the scene's frame rate", icon="TIME")
        layout.operator("weft.bake", icon="PHYSICS")


CLASSES = [WEFT_PT_physics, WEFT_PT_bake]
