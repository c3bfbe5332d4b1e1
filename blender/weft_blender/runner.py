"""Running a bake: with the ``weft`` Python module when Blender's Python can import it, else with
the ``weft`` binary; on a thread of its own, told of each frame, and cancelled on request.

Where weft is found, first to last: the module in Blender's Python; the module in the add-on's
*weft module folder* or ``$WEFT_PYTHONPATH``; the binary in the add-on's *weft binary*,
``$WEFT_BIN``, or ``weft`` on the ``PATH``.
"""

import importlib
import os
import shutil
import subprocess
import sys
import threading

from . import props


class Cancelled(Exception):
    """Raised from the progress callback to stop the module's bake after a frame."""


def find_module():
    """The ``weft`` module, or None."""
    try:
        return importlib.import_module("weft")
    except ImportError:
        pass
    prefs = props.preferences()
    for folder in (prefs.module_path if prefs else "", os.environ.get("WEFT_PYTHONPATH", "")):
        if folder and os.path.isdir(folder) and folder not in sys.path:
            sys.path.append(folder)
            try:
                return importlib.import_module("weft")
            except ImportError:
                sys.path.remove(folder)
    return None


def find_binary():
    """The ``weft`` binary's path, or None."""
    prefs = props.preferences()
    for candidate in (prefs.binary if prefs else "", os.environ.get("WEFT_BIN", "")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return shutil.which("weft")


class Bake:
    """One bake of ``scene`` (a scene file) into ``out``, ``frames`` frames. Start it with
    ``start()``; it sets ``frame`` as frames end, then ``done``, with ``error`` (a line) or
    ``cancelled``. ``cancel()`` asks it to stop after the frame under way; a bake of the same scene
    goes on from there (it resumes from weft's checkpoint)."""

    def __init__(self, scene, out, frames):
        self.scene, self.out, self.frames = scene, out, frames
        self.frame = 0
        self.done = False
        self.error = None
        self.cancelled = False
        self.via = None
        #: Whether ``frame`` counts the frames as they end (the module tells them; the binary not).
        self.tells_frames = False
        self._cancel = threading.Event()
        self._thread = None

    def start(self):
        module = find_module()
        if module is not None:
            self.via = f"the weft module {getattr(module, '__version__', '')}".strip()
            self.tells_frames = True
            target = lambda: self._with_module(module)  # noqa: E731
        else:
            binary = find_binary()
            if binary is None:
                raise RuntimeError(
                    "weft not found: install the weft module for Blender's Python, or set the weft binary "
                    "in the add-on's preferences (docs/blender.md)"
                )
            self.via = f"the weft binary {binary}"
            target = lambda: self._with_binary(binary)  # noqa: E731
        self._thread = threading.Thread(target=target, name="weft bake", daemon=True)
        self._thread.start()

    def cancel(self):
        self._cancel.set()

    def wait(self, timeout=None):
        self._thread.join(timeout)
        return self.done

    def _progress(self, frame, frames):
        self.frame = frame
        if self._cancel.is_set():
            raise Cancelled()

    def _with_module(self, weft):
        try:
            weft.bake(self.scene, self.out, resume=True, progress=self._progress)
            self.frame = self.frames
        except Cancelled:
            self.cancelled = True
        except Exception as e:  # a WeftError, or any failure: said to the user in one line
            self.error = str(e)
        finally:
            self.done = True

    def _with_binary(self, binary):
        try:
            args = [binary, "bake", self.scene, "--out", self.out, "--resume", "-q"]
            process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            while True:
                try:
                    _, stderr = process.communicate(timeout=0.1)
                    break
                except subprocess.TimeoutExpired:
                    if self._cancel.is_set():
                        process.terminate()
                        process.wait()
                        self.cancelled = True
                        return
            if process.returncode != 0:
                lines = [line for line in stderr.splitlines() if line.strip()]
                self.error = lines[-1] if lines else f"weft exited with status {process.returncode}"
            else:
                self.frame = self.frames
        except OSError as e:
            self.error = f"{binary}: {e}"
        finally:
            self.done = True
