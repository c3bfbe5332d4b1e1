//! `[[collider]]` tables with `shape = "mesh"`: the OBJ file, its objects, and the animation (a
//! PC2 cache or an OBJ sequence) read into the frames of a [`MeshColliderDesc`], with what is
//! needed to point a broken rule back at a key or a file line.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use toml::Spanned;
use weft_core::Rule;
use weft_core::collider::ColliderError;
use weft_core::limits::Limits;
use weft_core::mesh_collider::MeshColliderDesc;

use super::collider::{Place, RawCollider, number};
use super::convert::resolve;
use super::error::{SceneError, SceneRule};
use super::raw::OneOrList;
use super::spans::one_line;
use crate::obj::{ObjError, ObjMesh, ObjProblem, ObjectSelection, parse_obj_limited};
use crate::pc2::parse_pc2;

/// The geometry of a mesh collider: its triangles and the vertices of every frame, and when.
#[derive(Debug)]
pub(super) struct Frames {
    pub(super) triangles: Vec<[u32; 3]>,
    pub(super) frames: Vec<Vec<[f32; 3]>>,
    pub(super) frame_start: f32,
    pub(super) frame_interval: f32,
}

/// Where a mesh collider's parts came from.
#[derive(Debug)]
pub(super) struct Origin {
    /// The OBJ file as messages show it.
    obj_file: String,
    /// Where the `mesh` key's value is.
    mesh_at: usize,
    /// The OBJ vertex number (from 1) of each vertex.
    vertex_numbers: Vec<u32>,
    /// The line of each vertex's `v`.
    vertex_lines: Vec<u32>,
    /// The line of the face each triangle was cut from.
    triangle_lines: Vec<u32>,
    /// The animation, if any: where its key is, and its files.
    animation: Option<(usize, Animation)>,
}

/// Where the frames came from.
#[derive(Debug)]
enum Animation {
    /// A PC2 cache (as messages show it): frame `k` is its sample `k`.
    Pc2(String),
    /// An OBJ sequence: the file of each frame (as messages show them).
    Sequence(Vec<String>),
}

/// Why a file could not be read.
enum ReadProblem {
    Io(io::Error),
    NotAFile,
    TooLarge { len: u64, limit: u64 },
}

/// Reads a whole file the scene names: regular, at most `limit` bytes (checked before reading).
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadProblem> {
    let file = File::open(path).map_err(ReadProblem::Io)?;
    let meta = file.metadata().map_err(ReadProblem::Io)?;
    if !meta.is_file() {
        return Err(ReadProblem::NotAFile);
    }
    if meta.len() > limit {
        return Err(ReadProblem::TooLarge { len: meta.len(), limit });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(ReadProblem::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadProblem::TooLarge { len: bytes.len() as u64, limit });
    }
    Ok(bytes)
}

impl ReadProblem {
    /// As an OBJ problem (an OBJ file's messages).
    fn obj(self) -> ObjProblem {
        match self {
            ReadProblem::Io(e) => ObjProblem::Read(e.to_string()),
            ReadProblem::NotAFile => ObjProblem::NotAFile,
            ReadProblem::TooLarge { len, limit } => ObjProblem::TooLarge { len, limit },
        }
    }

    /// As a PC2 problem.
    fn pc2(self) -> String {
        match self {
            ReadProblem::Io(e) => format!("cannot read the PC2 file: {e}"),
            ReadProblem::NotAFile => "not a regular file: an animation must be a PC2 file".to_string(),
            ReadProblem::TooLarge { len, limit } => format!(
                "the PC2 file is {len} bytes, more than the limit of {limit} bytes for a mesh (raise it with --max-mesh-bytes)"
            ),
        }
    }
}

/// Reads and parses one OBJ file of a mesh collider (its `mesh`, or a frame of its animation),
/// pointing an error at the file's line, or at the scene key `key` (at byte `key_at`) for a
/// problem with the whole file (`object` at `object_at` for a missing object).
struct ObjReader<'a, 's> {
    place: &'a Place<'s>,
    selection: ObjectSelection,
    object_at: Option<usize>,
    limits: &'a Limits,
}

impl ObjReader<'_, '_> {
    fn read(
        &self,
        path: &Path,
        file: &str,
        key: &str,
        key_at: usize,
    ) -> Result<(ObjMesh, Vec<u8>), SceneError> {
        let whole = |problem: ObjProblem| {
            let (key, at) = match (&problem, self.object_at) {
                (ObjProblem::NoSuchObject { .. }, Some(at)) => ("object", at),
                _ => (key, key_at),
            };
            self.place.fail(key, at, SceneRule::ObjFile { file: file.to_string(), problem })
        };
        let bytes = read_limited(path, self.limits.max_mesh_bytes).map_err(|p| whole(p.obj()))?;
        let obj = parse_obj_limited(&bytes, &self.selection, self.limits).map_err(
            |ObjError { line, problem }| match line {
                Some(line) => self.place.fail_in(file, line, key, SceneRule::Obj(problem)),
                None => whole(problem),
            },
        )?;
        Ok((obj, bytes))
    }
}

/// The number of `v` statements of an OBJ file that parsed (so it is UTF-8).
fn vertex_statements(bytes: &[u8]) -> usize {
    let text = std::str::from_utf8(bytes).unwrap_or_default();
    text.split('\n').filter(|line| line.split_whitespace().next() == Some("v")).count()
}

/// The `#` run of an OBJ sequence pattern: its start and length, if the pattern has one run.
fn hash_run(pattern: &str) -> Option<(usize, usize)> {
    let start = pattern.find('#')?;
    let len = pattern[start..].find(|c| c != '#').unwrap_or(pattern.len() - start);
    (!pattern[start + len..].contains('#')).then_some((start, len))
}

/// Reads a mesh collider's OBJ file (`mesh`, `object`) and animation (`animation`,
/// `animation_first`, `animation_fps`, `animation_start`); `fps` (the simulation's) is the
/// default `animation_fps`.
pub(super) fn read(
    mesh: &Spanned<String>,
    raw: &RawCollider,
    place: &Place<'_>,
    limits: &Limits,
    fps: f64,
) -> Result<(Frames, Origin), SceneError> {
    let scene = place.source.path();
    let mesh_at = mesh.span().start;
    let (selection, object_at) = match &raw.object {
        None => (ObjectSelection::Only, None),
        Some(o) => {
            let at = o.span().start;
            let names: Vec<String> = match o.get_ref() {
                OneOrList::One(name) => vec![name.clone()],
                OneOrList::List(names) => names.iter().map(|n| n.get_ref().clone()).collect(),
            };
            if names.is_empty() {
                return Err(place.fail("object", at, SceneRule::EmptyList { key: "object" }));
            }
            (ObjectSelection::Named(names), Some(at))
        }
    };
    let reader = ObjReader { place, selection, object_at, limits };
    let path = resolve(scene, mesh.get_ref());
    let obj_file = one_line(&path.display().to_string());
    let (obj, bytes) = reader.read(&path, &obj_file, "mesh", mesh_at)?;

    // The animation's keys need an animation.
    let Some(animation) = &raw.animation else {
        let keys = [
            ("animation_first", raw.animation_first.as_ref().map(|v| v.span().start)),
            ("animation_fps", raw.animation_fps.as_ref().map(|v| v.span().start)),
            ("animation_start", raw.animation_start.as_ref().map(|v| v.span().start)),
        ];
        if let Some((key, at)) = keys.into_iter().find_map(|(key, at)| Some((key, at?))) {
            let needs = "`animation` (a PC2 file or an OBJ sequence)";
            return Err(place.fail(key, at, SceneRule::Needs { key, needs }));
        }
        let origin = Origin {
            obj_file,
            mesh_at,
            vertex_numbers: obj.vertex_numbers,
            vertex_lines: obj.vertex_lines,
            triangle_lines: obj.triangle_lines,
            animation: None,
        };
        let frames = Frames {
            triangles: obj.triangles,
            frames: vec![obj.positions],
            frame_start: 0.0,
            frame_interval: 0.0,
        };
        return Ok((frames, origin));
    };

    // When: frame k at `animation_start + k / animation_fps`.
    let animation_at = animation.span().start;
    let rate = match &raw.animation_fps {
        Some(f) => {
            let at = f.span().start;
            let v = number(*f.get_ref()).map_err(|r| place.fail("animation_fps", at, r))?;
            if v <= 0.0 {
                let rule = SceneRule::Model(Rule::NotPositive { value: v as f64 });
                return Err(place.fail("animation_fps", at, rule));
            }
            v as f64
        }
        None if fps.is_finite() && fps > 0.0 => fps,
        None => {
            let needs = "`animation_fps` (frames per second, > 0): its default, simulation.fps, is not > 0";
            return Err(place.fail("animation", animation_at, SceneRule::Needs { key: "animation", needs }));
        }
    };
    let frame_start = match &raw.animation_start {
        Some(s) => number(*s.get_ref()).map_err(|r| place.fail("animation_start", s.span().start, r))?,
        None => 0.0,
    };
    let frame_interval = (1.0 / rate) as f32;

    let pattern = animation.get_ref();
    let fail_animation = |file: &str, problem: String| {
        place.fail("animation", animation_at, SceneRule::AnimationFile { file: file.to_string(), problem })
    };
    let (frames, kind) = match hash_run(pattern) {
        None if pattern.contains('#') => {
            let problem =
                "an OBJ sequence has one run of # for the frame number (walk/body_####.obj)".to_string();
            return Err(fail_animation(&one_line(pattern), problem));
        }
        None => {
            if let Some(f) = &raw.animation_first {
                let needs =
                    "an OBJ sequence `animation` (a file name with a run of #, e.g. \"walk/body_####.obj\")";
                return Err(place.fail(
                    "animation_first",
                    f.span().start,
                    SceneRule::Needs { key: "animation_first", needs },
                ));
            }
            // A PC2 cache: one point per `v` of the OBJ file, sample k is frame k.
            let path = resolve(scene, pattern);
            let file = one_line(&path.display().to_string());
            let pc2_bytes =
                read_limited(&path, limits.max_mesh_bytes).map_err(|p| fail_animation(&file, p.pc2()))?;
            let pc2 = parse_pc2(&pc2_bytes).map_err(|e| fail_animation(&file, one_line(&e.to_string())))?;
            let vertices = vertex_statements(&bytes);
            if pc2.point_count != vertices {
                let problem = format!(
                    "the PC2 file has {} points, but {obj_file} has {vertices} vertices (`v` lines): a PC2 cache needs one point per vertex of the OBJ file, in file order",
                    pc2.point_count
                );
                return Err(fail_animation(&file, problem));
            }
            if pc2.sample_count == 0 {
                return Err(fail_animation(&file, "the PC2 file holds no sample".to_string()));
            }
            let frames = (0..pc2.sample_count)
                .map(|k| {
                    let sample = pc2.sample(k);
                    obj.vertex_numbers.iter().map(|&n| sample[n as usize - 1]).collect()
                })
                .collect();
            (frames, Animation::Pc2(file))
        }
        Some((run_start, run_len)) => {
            let first = match &raw.animation_first {
                Some(f) => {
                    let v = *f.get_ref();
                    if v < 0 {
                        let rule = SceneRule::Model(Rule::Negative { value: v as f64 });
                        return Err(place.fail("animation_first", f.span().start, rule));
                    }
                    v
                }
                None => 1,
            };
            let name =
                |n: i64| format!("{}{n:0run_len$}{}", &pattern[..run_start], &pattern[run_start + run_len..]);
            let mut frames = Vec::new();
            let mut files = Vec::new();
            for n in first.. {
                let path = resolve(scene, &name(n));
                let file = one_line(&path.display().to_string());
                if matches!(std::fs::metadata(&path), Err(e) if e.kind() == io::ErrorKind::NotFound) {
                    if frames.is_empty() {
                        let problem = format!(
                            "the OBJ sequence has no frame: there is no frame {n} (frames are numbered from animation_first = {first})"
                        );
                        return Err(fail_animation(&file, problem));
                    }
                    break;
                }
                let k = frames.len();
                let (frame, _) =
                    reader.read(&path, &file, &format!("animation (frame {k})"), animation_at)?;
                if frame.positions.len() != obj.positions.len() {
                    let problem = format!(
                        "frame {k} has {} vertices, but the collider's mesh {obj_file} has {}: every frame needs the mesh's vertices, in the same order",
                        frame.positions.len(),
                        obj.positions.len()
                    );
                    return Err(fail_animation(&file, problem));
                }
                if frame.triangles != obj.triangles {
                    let problem = match frame.triangles.len() == obj.triangles.len() {
                        true => {
                            let i = frame
                                .triangles
                                .iter()
                                .zip(&obj.triangles)
                                .position(|(a, b)| a != b)
                                .unwrap_or(0);
                            format!(
                                "frame {k}'s faces differ from those of the collider's mesh {obj_file}: triangle {i} is {:?} here and {:?} there; every frame needs the mesh's faces",
                                frame.triangles[i], obj.triangles[i]
                            )
                        }
                        false => format!(
                            "frame {k} has {} triangles, but the collider's mesh {obj_file} has {}: every frame needs the mesh's faces",
                            frame.triangles.len(),
                            obj.triangles.len()
                        ),
                    };
                    return Err(fail_animation(&file, problem));
                }
                frames.push(frame.positions);
                files.push(file);
            }
            (frames, Animation::Sequence(files))
        }
    };
    let origin = Origin {
        obj_file,
        mesh_at,
        vertex_numbers: obj.vertex_numbers,
        vertex_lines: obj.vertex_lines,
        triangle_lines: obj.triangle_lines,
        animation: Some((animation_at, kind)),
    };
    Ok((Frames { triangles: obj.triangles, frames, frame_start, frame_interval }, origin))
}

impl Origin {
    /// A broken rule of [`MeshColliderDesc::validate`] that is not about the transform,
    /// thickness or friction, at the key or the file line behind it.
    pub(super) fn error(
        &self,
        desc: &MeshColliderDesc,
        raw: &RawCollider,
        place: &Place<'_>,
        e: ColliderError,
    ) -> SceneError {
        let rule = SceneRule::Model(e.rule);
        let animation_at = self.animation.as_ref().map(|(at, _)| *at);
        match (e.field, e.index) {
            ("triangles", Some(i)) => match self.triangle_lines.get(i) {
                Some(&line) => place.fail_in(
                    &self.obj_file,
                    line as usize,
                    &format!("mesh: triangles[{i}] (from this face)"),
                    rule,
                ),
                None => place.fail("mesh", self.mesh_at, rule),
            },
            ("frames", Some(k)) => match &self.animation {
                None => {
                    // A coordinate of the OBJ file: point at its vertex.
                    let bad = |c: &f32| !c.is_finite() || c.abs() > weft_core::collider::MAX_EXTENT;
                    let vertex = desc.frames.get(k).and_then(|f| f.iter().position(|v| v.iter().any(bad)));
                    match vertex
                        .and_then(|i| Some((*self.vertex_lines.get(i)?, *self.vertex_numbers.get(i)?)))
                    {
                        Some((line, number)) => place.fail_in(
                            &self.obj_file,
                            line as usize,
                            &format!("mesh (OBJ vertex {number})"),
                            rule,
                        ),
                        None => place.fail("mesh", self.mesh_at, rule),
                    }
                }
                Some((at, Animation::Pc2(file))) => {
                    place.fail(&format!("animation: sample {k} of {file}"), *at, rule)
                }
                Some((at, Animation::Sequence(files))) => {
                    let shown = match files.get(k) {
                        Some(file) => format!("animation: frame {k} ({file})"),
                        None => format!("animation: frame {k}"),
                    };
                    place.fail(&shown, *at, rule)
                }
            },
            ("frame_start", _) => match &raw.animation_start {
                Some(s) => place.fail("animation_start", s.span().start, rule),
                None => place.fail("animation", animation_at.unwrap_or(self.mesh_at), rule),
            },
            ("frame_interval", _) => match &raw.animation_fps {
                Some(f) => place.fail("animation_fps", f.span().start, rule),
                None => place.fail("animation", animation_at.unwrap_or(self.mesh_at), rule),
            },
            (field, _) => place.fail(&format!("mesh: {field}"), animation_at.unwrap_or(self.mesh_at), rule),
        }
    }
}
