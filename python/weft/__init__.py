"""weft from Python: an XPBD cloth solver and offline cloth baker.

* ``bake(scene, out, ...)``: bake a scene as ``weft bake`` does; returns ``summary.toml``'s fields.
* ``Scene``: a scene from a TOML file (or one variant of its ``[wedge]``) or from a dict, with key
  overrides in the ``[wedge]`` keys' syntax; ``Scene.validate()`` returns what ``weft validate``
  prints, as a dict.
* ``Simulation``: a scene stepped frame by frame; positions and velocities as ``numpy`` arrays
  (``float32``, shape ``(n, 3)``); colliders and pins moved between frames.
* ``read_pc2(path)``, ``read_obj_sequence(folder, name)``: caches as ``(samples, points, 3)``
  arrays.
* ``WeftError``: every bad input (a ``ValueError``), with weft's one-line message.

Units are SI (m, kg, s) and weft's axes (y up). See docs/python.md in the weft repository.
"""

from ._weft import (
    Scene,
    Simulation,
    WeftError,
    __version__,
    bake,
    read_obj_sequence,
    read_pc2,
    simd_level,
)

__all__ = [
    "Scene",
    "Simulation",
    "WeftError",
    "__version__",
    "bake",
    "read_obj_sequence",
    "read_pc2",
    "simd_level",
]
