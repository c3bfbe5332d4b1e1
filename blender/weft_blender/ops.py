"""``bpy.ops.weft.bake()``: writes the scene, bakes it, and puts the result on each cloth.

Run from a script (or with Blender in the background) it bakes at once and prints its progress.
From the Bake button it bakes while Blender stays usable, with a progress bar and the frame in
the status bar; Esc cancels after the frame under way, and baking again goes on from there.
"""

import os
import time

import bpy

from . import export, runner

#: The Mesh Cache modifier that plays a cloth's bake back.
MODIFIER = "weft"


def play_back(context, cloths, out):
    """Gives each baked cloth a Mesh Cache modifier named ``weft``, first in its stack, reading its
    PC2 cache: sample ``k`` at scene frame ``frame_start + k``, in Frame mode (the scene's frame
    rate, which the bake used, sets the speed)."""
    scene = context.scene
    for obj, name in cloths:
        mod = obj.modifiers.get(MODIFIER)
        if mod is None or mod.type != "MESH_CACHE":
            if mod is not None:
                obj.modifiers.remove(mod)
            mod = obj.modifiers.new(MODIFIER, "MESH_CACHE")
        mod.cache_format = "PC2"
        mod.filepath = os.path.join(out, f"{name}.pc2")
        mod.time_mode = "FRAME"
        mod.play_mode = "SCENE"
        mod.frame_start = float(scene.frame_start)
        mod.frame_scale = 1.0
        mod.deform_mode = "OVERWRITE"
        mod.forward_axis = "POS_Y"
        mod.up_axis = "POS_Z"
        mod.flip_axis = set()
        if obj.modifiers[0] != mod:
            with context.temp_override(object=obj, active_object=obj):
                bpy.ops.object.modifier_move_to_index(modifier=MODIFIER, index=0)
        obj.update_tag()


class WEFT_OT_bake(bpy.types.Operator):
    """Bake the scene's weft cloths over its frame range and play them back"""

    bl_idname = "weft.bake"
    bl_label = "Bake with weft"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return context.scene is not None and context.mode == "OBJECT"

    def _prepare(self, context):
        """Writes the scene and makes its bake; None (with the reason reported) if it cannot."""
        try:
            scene_file, out, frames, cloths = export.write_scene(context)
        except export.ExportError as e:
            self.report({"ERROR"}, str(e))
            return None
        self._cloths, self._out = cloths, out
        return runner.Bake(scene_file, out, frames)

    def _finish(self, context, bake):
        if bake.error:
            self.report({"ERROR"}, f"weft: {bake.error}")
            return {"CANCELLED"}
        if bake.cancelled:
            self.report({"WARNING"}, f"weft: cancelled after frame {bake.frame}; bake again to go on from there")
            return {"CANCELLED"}
        play_back(context, self._cloths, self._out)
        self.report({"INFO"}, f"weft: baked {bake.frames} frames into {self._out} with {bake.via}")
        return {"FINISHED"}

    def execute(self, context):
        bake = self._prepare(context)
        if bake is None:
            return {"CANCELLED"}
        try:
            bake.start()
        except RuntimeError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        print(f"weft: baking {bake.frames} frames with {bake.via}", flush=True)
        shown = -1
        while not bake.wait(0.2):
            if bake.tells_frames and bake.frame != shown and bake.frame % 10 == 0:
                shown = bake.frame
                print(f"weft: frame {bake.frame} of {bake.frames}", flush=True)
        return self._finish(context, bake)

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        self._bake = self._prepare(context)
        if self._bake is None:
            return {"CANCELLED"}
        try:
            self._bake.start()
        except RuntimeError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.progress_begin(0, self._bake.frames)
        self._started = time.monotonic()
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        bake = self._bake
        if event.type == "ESC" and not bake.done:
            bake.cancel()
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        wm = context.window_manager
        wm.progress_update(bake.frame)
        seconds = time.monotonic() - self._started
        done = f"frame {bake.frame} of {bake.frames}" if bake.tells_frames else f"{bake.frames} frames"
        context.workspace.status_text_set(f"weft: baking {done} ({seconds:.0f} s, {bake.via}); Esc cancels")
        if not bake.done:
            return {"RUNNING_MODAL"}
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        context.workspace.status_text_set(None)
        return self._finish(context, bake)


CLASSES = [WEFT_OT_bake]
