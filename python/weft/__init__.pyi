"""Type stubs of the weft module (its native part, weft._weft, re-exported here)."""

import os
import pathlib
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str
#: The SIMD level the kernels were compiled for (``"avx2"``, ``"sse4.1"``, ...).
simd_level: str

StrPath = Union[str, "os.PathLike[str]"]
#: A scene as functions take it: a ``Scene``, a dict laid out as a scene file, or a path.
SceneLike = Union["Scene", Mapping[str, Any], StrPath]

class WeftError(ValueError):
    """Bad input to weft; its message is weft's one-line error (``FILE:LINE:COL: PLACE: RULE``)."""

class Scene:
    """A weft scene, read and checked against the scene format, not yet built into a model."""

    def __init__(
        self,
        path: StrPath,
        *,
        overrides: Optional[Mapping[str, Any]] = None,
        variant: Optional[int] = None,
    ) -> None:
        """Reads the scene file at ``path``: as written, its ``[wedge]`` variant ``variant``, or with
        ``overrides`` (``{"cloth.flag.stretch_compliance": 1e-5, "simulation.frames": 10}``)."""
    @staticmethod
    def from_dict(
        data: Mapping[str, Any],
        *,
        path: Optional[StrPath] = None,
        overrides: Optional[Mapping[str, Any]] = None,
    ) -> "Scene":
        """A scene from a dict laid out as a scene file (``simulation``, ``cloth``, ``collider``).
        ``path`` names it in messages; its folder is where the files it names are read from."""
    @staticmethod
    def variants(path: StrPath) -> List[Dict[str, Any]]:
        """The ``[wedge]`` variants of the scene file at ``path``: ``index``, ``name``, ``values``."""
    @property
    def path(self) -> pathlib.Path:
        """The file the scene is read from (a dict's: ``<dict>``, or the ``path`` given)."""
    @property
    def text(self) -> str:
        """The scene as TOML, overrides included."""
    @property
    def fps(self) -> float: ...
    @property
    def frames(self) -> int: ...
    @property
    def cloths(self) -> List[str]: ...
    @property
    def colliders(self) -> List[str]: ...
    @property
    def variant(self) -> Optional[Dict[str, Any]]: ...
    def validate(self) -> Dict[str, Any]:
        """What ``weft validate`` prints about the model, as a dict; raises ``WeftError``."""
    def save(self, path: StrPath) -> None:
        """Writes ``text`` to ``path``."""

def bake(
    scene: SceneLike,
    out: StrPath,
    *,
    formats: Union[str, Sequence[str], None] = None,
    threads: Optional[int] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
    resume: bool = False,
    stats: str = "light",
    kernel: str = "simd",
    checkpoint_every: Optional[int] = None,
) -> Dict[str, Any]:
    """Bakes ``scene`` into ``out`` as ``weft bake`` does; returns the fields of ``summary.toml``.

    ``formats``: ``"pc2"``, ``"usd"``, ``"obj"``, a comma list or a sequence (``None``: PC2).

    ``progress(frame, frames)`` is called after every frame. The GIL is released while the bake
    runs. Ctrl-C (or ``progress`` raising) stops it after a frame with its checkpoint kept, then
    raises; ``resume=True`` goes on from there to the same bytes."""

class Simulation:
    """A scene's model stepped frame by frame, as a bake steps it."""

    def __init__(self, scene: SceneLike, *, threads: Optional[int] = None, kernel: str = "simd") -> None: ...
    def step(self, frames: int = 1) -> None:
        """Steps ``frames`` frames with the GIL released; Ctrl-C stops after the frame under way."""
    @property
    def frame(self) -> int: ...
    @property
    def time(self) -> float: ...
    @property
    def fps(self) -> float: ...
    @property
    def frames(self) -> int: ...
    @property
    def substeps(self) -> int: ...
    @property
    def cloths(self) -> List[str]: ...
    @property
    def colliders(self) -> List[str]: ...
    def positions(self, cloth: Optional[str] = None) -> npt.NDArray[np.float32]:
        """Positions (m) of a cloth's particles (all particles for ``None``), shape ``(n, 3)``."""
    def velocities(self, cloth: Optional[str] = None) -> npt.NDArray[np.float32]:
        """Velocities (m/s), shape ``(n, 3)``."""
    def pins(self, cloth: str) -> List[int]:
        """The pinned particles of ``cloth`` (indices within it)."""
    def move_collider(
        self,
        name: str,
        position: Sequence[float],
        rotation: Optional[Sequence[float]] = None,
    ) -> None:
        """Moves a collider over the next frame to ``position`` (m) and ``rotation`` (``[x, y, z, w]``)."""
    def move_pins(self, cloth: str, indices: Sequence[int], positions: Sequence[Sequence[float]]) -> None:
        """Moves pins of ``cloth`` over the next frame to ``positions`` (m)."""

def read_pc2(path: StrPath) -> npt.NDArray[np.float32]:
    """A PC2 cache as a ``(samples, points, 3)`` array (m)."""

def read_obj_sequence(folder: StrPath, name: str) -> npt.NDArray[np.float32]:
    """The OBJ sequence ``NAME.0000.obj``, ... in ``folder`` as a ``(samples, points, 3)`` array."""

__all__: List[str]
