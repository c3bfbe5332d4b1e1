//! `[[collider]]` tables with `shape = "mesh"`: the OBJ file, its objects, and the animation (a
//! PC2 cache or an OBJ sequence) read into the frames of a [`MeshColliderDesc`], with what is
//! needed to point a broken rule back at a key or a file line.

use std::io;
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
use crate::bounded::{Accept, ReadProblem, read_bounded};
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

/// A problem reading a mesh collider's PC2 file (see [`crate::bounded`]), as its message.
fn pc2_problem(problem: ReadProblem) -> String {
    match problem {
        ReadProblem::Io(e) => format!("cannot read the PC2 file: {e}"),
        ReadProblem::NotAFile => "not a regular file: an animation must be a PC2 file".to_string(),
        ReadProblem::TooLarge { len, limit } => format!(
            "the PC2 file is {len} bytes, more than the limit of {limit} bytes for a mesh (raise it with --max-mesh-bytes)"
        ),
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
        let bytes = read_bounded(path, self.limits.max_mesh_bytes, Accept::RegularFiles)
            .map_err(|e| whole(e.problem.into()))?;
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
    let (selection, object_at) = selection(raw, place)?;
    let reader = ObjReader { place, selection, object_at, limits };
    let mesh_at = mesh.span().start;
    let path = resolve(place.source.path(), mesh.get_ref());
    let obj_file = one_line(&path.display().to_string());
    let (mut obj, bytes) = reader.read(&path, &obj_file, "mesh", mesh_at)?;
    let Some(animation) = &raw.animation else {
        refuse_animation_keys(raw, place)?;
        let origin = Origin::new(obj_file, mesh_at, &mut obj, None);
        let frames = Frames {
            triangles: obj.triangles,
            frames: vec![obj.positions],
            frame_start: 0.0,
            frame_interval: 0.0,
        };
        return Ok((frames, origin));
    };
    let at = animation.span().start;
    let (frame_start, frame_interval) = timing(raw, place, fps, at)?;
    let animated = Animated { reader: &reader, raw, obj: &obj, obj_bytes: &bytes, obj_file: &obj_file, at };
    let (frames, kind) = animated.frames(animation.get_ref())?;
    let origin = Origin::new(obj_file, mesh_at, &mut obj, Some((at, kind)));
    Ok((Frames { triangles: obj.triangles, frames, frame_start, frame_interval }, origin))
}

/// The objects of the OBJ file a collider takes (its `object` key), and where the key is.
fn selection(raw: &RawCollider, place: &Place<'_>) -> Result<(ObjectSelection, Option<usize>), SceneError> {
    let Some(o) = &raw.object else { return Ok((ObjectSelection::Only, None)) };
    let at = o.span().start;
    let names: Vec<String> = match o.get_ref() {
        OneOrList::One(name) => vec![name.clone()],
        OneOrList::List(names) => names.iter().map(|n| n.get_ref().clone()).collect(),
    };
    if names.is_empty() {
        return Err(place.fail("object", at, SceneRule::EmptyList { key: "object" }));
    }
    Ok((ObjectSelection::Named(names), Some(at)))
}

/// Refuses the animation's keys on a collider without `animation`.
fn refuse_animation_keys(raw: &RawCollider, place: &Place<'_>) -> Result<(), SceneError> {
    let keys = [
        ("animation_first", raw.animation_first.as_ref().map(|v| v.span().start)),
        ("animation_fps", raw.animation_fps.as_ref().map(|v| v.span().start)),
        ("animation_start", raw.animation_start.as_ref().map(|v| v.span().start)),
    ];
    match keys.into_iter().find_map(|(key, at)| Some((key, at?))) {
        Some((key, at)) => {
            let needs = "`animation` (a PC2 file or an OBJ sequence)";
            Err(place.fail(key, at, SceneRule::Needs { key, needs }))
        }
        None => Ok(()),
    }
}

/// When an animation's frames are: frame `k` at `animation_start + k / animation_fps` s; the
/// start and the interval in s (`animation_at`: where the `animation` key is).
fn timing(
    raw: &RawCollider,
    place: &Place<'_>,
    fps: f64,
    animation_at: usize,
) -> Result<(f32, f32), SceneError> {
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
    Ok((frame_start, (1.0 / rate) as f32))
}

/// Reads the frames of a mesh collider's animation: a PC2 cache or an OBJ sequence.
struct Animated<'a> {
    /// Reads (and points errors of) the OBJ files of a sequence.
    reader: &'a ObjReader<'a, 'a>,
    raw: &'a RawCollider,
    /// The collider's mesh, its bytes and its file as messages show it.
    obj: &'a ObjMesh,
    obj_bytes: &'a [u8],
    obj_file: &'a str,
    /// Where the `animation` key's value is.
    at: usize,
}

/// The vertices of every frame of an animation.
type AnimationFrames = Vec<Vec<[f32; 3]>>;

impl Animated<'_> {
    /// The frames of the animation `pattern` names, and where they came from.
    fn frames(&self, pattern: &str) -> Result<(AnimationFrames, Animation), SceneError> {
        match hash_run(pattern) {
            None if pattern.contains('#') => {
                let problem =
                    "an OBJ sequence has one run of # for the frame number (walk/body_####.obj)".to_string();
                Err(self.fail(&one_line(pattern), problem))
            }
            None => self.pc2(pattern),
            Some(run) => self.sequence(pattern, run),
        }
    }

    /// `animation` (a file) broke a rule: `problem`.
    fn fail(&self, file: &str, problem: String) -> SceneError {
        let rule = SceneRule::AnimationFile { file: file.to_string(), problem };
        self.reader.place.fail("animation", self.at, rule)
    }

    /// The path of a file the scene names.
    fn resolve(&self, name: &str) -> std::path::PathBuf {
        resolve(self.reader.place.source.path(), name)
    }

    /// A PC2 cache: one point per `v` of the OBJ file, sample k is frame k.
    fn pc2(&self, name: &str) -> Result<(AnimationFrames, Animation), SceneError> {
        if let Some(f) = &self.raw.animation_first {
            let needs =
                "an OBJ sequence `animation` (a file name with a run of #, e.g. \"walk/body_####.obj\")";
            let rule = SceneRule::Needs { key: "animation_first", needs };
            return Err(self.reader.place.fail("animation_first", f.span().start, rule));
        }
        let path = self.resolve(name);
        let file = one_line(&path.display().to_string());
        let bytes = read_bounded(&path, self.reader.limits.max_mesh_bytes, Accept::RegularFiles)
            .map_err(|e| self.fail(&file, pc2_problem(e.problem)))?;
        let pc2 = parse_pc2(&bytes).map_err(|e| self.fail(&file, one_line(&e.to_string())))?;
        let vertices = vertex_statements(self.obj_bytes);
        if pc2.point_count != vertices {
            let problem = format!(
                "the PC2 file has {} points, but {} has {vertices} vertices (`v` lines): a PC2 cache needs one point per vertex of the OBJ file, in file order",
                pc2.point_count, self.obj_file
            );
            return Err(self.fail(&file, problem));
        }
        if pc2.sample_count == 0 {
            return Err(self.fail(&file, "the PC2 file holds no sample".to_string()));
        }
        let frames = (0..pc2.sample_count)
            .map(|k| {
                let sample = pc2.sample(k);
                self.obj.vertex_numbers.iter().map(|&n| sample[n as usize - 1]).collect()
            })
            .collect();
        Ok((frames, Animation::Pc2(file)))
    }

    /// An OBJ sequence: the files of `pattern` with its run of `#` (at `run_start`, `run_len`
    /// long) replaced by `animation_first`, the next number, ... up to the first missing one.
    fn sequence(
        &self,
        pattern: &str,
        (run_start, run_len): (usize, usize),
    ) -> Result<(AnimationFrames, Animation), SceneError> {
        let first = match &self.raw.animation_first {
            Some(f) if *f.get_ref() < 0 => {
                let rule = SceneRule::Model(Rule::Negative { value: *f.get_ref() as f64 });
                return Err(self.reader.place.fail("animation_first", f.span().start, rule));
            }
            Some(f) => *f.get_ref(),
            None => 1,
        };
        let name =
            |n: i64| format!("{}{n:0run_len$}{}", &pattern[..run_start], &pattern[run_start + run_len..]);
        let (mut frames, mut files) = (Vec::new(), Vec::new());
        for n in first.. {
            let path = self.resolve(&name(n));
            let file = one_line(&path.display().to_string());
            if matches!(std::fs::metadata(&path), Err(e) if e.kind() == io::ErrorKind::NotFound) {
                if frames.is_empty() {
                    let problem = format!(
                        "the OBJ sequence has no frame: there is no frame {n} (frames are numbered from animation_first = {first})"
                    );
                    return Err(self.fail(&file, problem));
                }
                break;
            }
            let k = frames.len();
            let (frame, _) = self.reader.read(&path, &file, &format!("animation (frame {k})"), self.at)?;
            if let Some(problem) = self.mismatch(k, &frame) {
                return Err(self.fail(&file, problem));
            }
            frames.push(frame.positions);
            files.push(file);
        }
        Ok((frames, Animation::Sequence(files)))
    }

    /// How frame `k` of a sequence differs from the collider's mesh in its vertex count or its
    /// faces, if it does.
    fn mismatch(&self, k: usize, frame: &ObjMesh) -> Option<String> {
        let (obj, obj_file) = (self.obj, self.obj_file);
        if frame.positions.len() != obj.positions.len() {
            return Some(format!(
                "frame {k} has {} vertices, but the collider's mesh {obj_file} has {}: every frame needs the mesh's vertices, in the same order",
                frame.positions.len(),
                obj.positions.len()
            ));
        }
        if frame.triangles == obj.triangles {
            return None;
        }
        Some(if frame.triangles.len() == obj.triangles.len() {
            let i = frame.triangles.iter().zip(&obj.triangles).position(|(a, b)| a != b).unwrap_or(0);
            format!(
                "frame {k}'s faces differ from those of the collider's mesh {obj_file}: triangle {i} is {:?} here and {:?} there; every frame needs the mesh's faces",
                frame.triangles[i], obj.triangles[i]
            )
        } else {
            format!(
                "frame {k} has {} triangles, but the collider's mesh {obj_file} has {}: every frame needs the mesh's faces",
                frame.triangles.len(),
                obj.triangles.len()
            )
        })
    }
}

impl Origin {
    /// Where the parts of a collider came from: its mesh `obj` (its line tables are taken), read
    /// from `obj_file` named at byte `mesh_at`, and its animation.
    fn new(
        obj_file: String,
        mesh_at: usize,
        obj: &mut ObjMesh,
        animation: Option<(usize, Animation)>,
    ) -> Self {
        Origin {
            obj_file,
            mesh_at,
            vertex_numbers: std::mem::take(&mut obj.vertex_numbers),
            vertex_lines: std::mem::take(&mut obj.vertex_lines),
            triangle_lines: std::mem::take(&mut obj.triangle_lines),
            animation,
        }
    }

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
