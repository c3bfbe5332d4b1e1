//! Wavefront OBJ meshes for cloths (`mesh = "shirt.obj"` in a scene).
//!
//! [`read_obj`] reads a file (refusing it before reading if it is larger than [`MAX_OBJ_BYTES`]
//! or not a regular file) and [`parse_obj`] its bytes into an [`ObjMesh`]: particles, triangles,
//! UVs per triangle corner, the triangle pairs cut from quads, and the file line behind every
//! particle and triangle, so that a rule broken later (by the model builder) still points at a line
//! of the OBJ file.
//!
//! # What is read
//!
//! | statement | use |
//! |-----------|-----|
//! | `v x y z [w]` | a vertex (m); `w` divides `x, y, z`; `v x y z r g b` (vertex colours) is accepted; the colours must be numbers and are ignored |
//! | `vt u v [w]` | a texture coordinate; `w` is ignored |
//! | `vn x y z` | checked and ignored |
//! | `f v/vt/vn ...` | a face of 3 or more corners; `vt` and `vn` optional (`v`, `v/vt`, `v//vn`, `v/vt/vn`), negative numbers count back from the last one defined |
//! | `o NAME`, `g NAME` | start an object (both alike: see *Objects*) |
//! | `l ...` (polylines), `p ...`, `mtllib`, `usemtl`, `s`, anything else | ignored |
//!
//! The file must be UTF-8 text. Numbers must be finite `f32`s. Every reference must be to a
//! vertex (texture coordinate, normal) defined on an earlier line, as the format says: OBJ counts
//! them from 1 in file order. Lines cannot be continued with `\`.
//!
//! # Particles and seams
//!
//! The particles are the *vertices* (`v`) that the chosen faces use, in file order: particle `k`
//! is the `k`-th such vertex. For a file with one object that uses all its vertices, particle `k`
//! is OBJ vertex `k + 1`; this is the numbering of a scene's `pins` and `pin_file`. A vertex is one
//! particle however many texture coordinates its faces give it: UV seams never split the cloth.
//! UVs are kept per triangle corner ([`ObjMesh::uvs`], for warp and weft) and per face corner
//! ([`ObjMesh::polygons`], for the caches), and only when every corner
//! of every chosen face has a `vt` (otherwise [`ObjMesh::uvs`] is empty and
//! [`ObjMesh::first_face_without_uv`] says where the first face without one is).
//!
//! # Triangulation
//!
//! A triangle stays as it is. A quad `a b c d` is cut along its shorter diagonal (measured in the
//! file's positions; `a–c` on a tie) into `a b c` + `a c d` or `a b d` + `b c d`, keeping its
//! orientation; the pair is remembered ([`ObjMesh::quads`]), so that both diagonals become shear
//! constraints and the four sides stretch constraints (see [`weft_core::mesh`]). An n-gon of 5 or
//! more corners is cut into a fan from its first corner: `0 1 2`, `0 2 3`, ... A face that repeats
//! a vertex is an error. The faces themselves are kept as given ([`ObjMesh::polygons`]), so that
//! the caches write quads and n-gons as they came.
//!
//! # Objects
//!
//! `o` and `g` are treated alike: each starts a new object named by the rest of its line, trimmed
//! (faces before the first are in [`UNNAMED_OBJECT`]). [`ObjectSelection::Named`] takes every
//! object of the given names (a name may occur several times; all its faces are taken); faces of
//! several objects that use the same vertex share its particle. [`ObjectSelection::Only`] takes
//! the file's one object, and is an error naming the objects when there are several.
//!
//! # Errors
//!
//! The file is read once, line by line, by the scanner in this module; an [`ObjError`] carries the
//! 1-based line of the statement at fault and the rule it breaks. It refuses what a cloth cannot
//! use and what common readers refuse: a number that does not parse or is not finite, a vertex
//! colour that is not a number, a `w` of 0, a face of fewer than three corners or repeating a
//! vertex, a reference to an element not yet defined, `usemtl` without a name. The test
//! `crates/weft-io/tests/obj_matches_tobj.rs` holds this scanner to the `tobj` crate's reading of
//! the example meshes and of hand-written cases.

use std::path::Path;

use weft_core::limits::Limits;
use weft_core::polygons::Polygons;

use crate::bounded::{Accept, ReadProblem, read_bounded};

/// Largest OBJ file [`read_obj`] reads, in bytes (1 GiB). Checked before and while reading
/// ([`crate::bounded`]).
pub const MAX_OBJ_BYTES: u64 = 1 << 30;

/// Name of the object of the faces before any `o` or `g` statement (as other OBJ readers, e.g.
/// `tobj`, name it).
pub const UNNAMED_OBJECT: &str = "unnamed_object";

/// Which objects of the file make the cloth.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ObjectSelection {
    /// The file's only object; an error if it has several.
    #[default]
    Only,
    /// Every object with one of these names, merged (shared vertices stay shared).
    Named(Vec<String>),
}

/// A cloth mesh read from an OBJ file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjMesh {
    /// The names of the objects taken, in file order, each once.
    pub objects: Vec<String>,
    /// Particle positions in m.
    pub positions: Vec<[f32; 3]>,
    /// For each particle, its OBJ vertex number (from 1, in file order).
    pub vertex_numbers: Vec<u32>,
    /// For each particle, the line of its `v` statement.
    pub vertex_lines: Vec<u32>,
    /// Triangles, particle indices, in face order.
    pub triangles: Vec<[u32; 3]>,
    /// For each triangle, the line of the face it was cut from.
    pub triangle_lines: Vec<u32>,
    /// Pairs of triangles cut from one quad.
    pub quads: Vec<[u32; 2]>,
    /// The faces as given (particle indices), with the UVs of their corners when
    /// [`ObjMesh::uvs`] has them: what the mesh caches write.
    pub polygons: Polygons,
    /// UVs of each triangle's corners, or empty when some chosen face has no `vt`.
    pub uvs: Vec<[[f32; 2]; 3]>,
    /// The line of the first chosen face without texture coordinates, if any has them missing.
    pub first_face_without_uv: Option<u32>,
    /// Faces taken: triangles, quads, larger polygons.
    pub face_counts: [usize; 3],
}

/// What is wrong with an OBJ file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjProblem {
    /// The file could not be opened or read.
    #[error("cannot read the OBJ file: {0}")]
    Read(String),
    /// A special file (a device, a pipe): only regular files are read.
    #[error("not a regular file: a mesh must be an OBJ file")]
    NotAFile,
    /// Larger than the limit (see [`ReadProblem::TooLarge`]).
    #[error(
        "the OBJ file is {len} bytes, more than the limit of {limit} bytes for a mesh (raise it with --max-mesh-bytes)"
    )]
    TooLarge {
        /// Its length in bytes.
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// Not UTF-8.
    #[error("the OBJ file is not UTF-8 text")]
    NotUtf8,
    /// A number that does not parse.
    #[error("`{statement}`: '{word}' is not a number")]
    NotANumber {
        /// The statement (`v`, `vt`, `vn`).
        statement: &'static str,
        /// The word.
        word: String,
    },
    /// A number that is NaN, infinite, or beyond `f32`.
    #[error("`{statement}`: '{word}' is not a finite 32-bit number")]
    NotFinite {
        /// The statement.
        statement: &'static str,
        /// The word.
        word: String,
    },
    /// A statement with the wrong number of values.
    #[error("`{statement}` has {found} number{}: it needs {expected}", if *found == 1 { "" } else { "s" })]
    Count {
        /// The statement.
        statement: &'static str,
        /// How many it has.
        found: usize,
        /// What it needs.
        expected: &'static str,
    },
    /// `v x y z 0`.
    #[error("`v`: a w of 0 scales the vertex to infinity")]
    ZeroW,
    /// A face corner that does not parse.
    #[error("face corner '{word}' is not v, v/vt, v//vn or v/vt/vn with whole numbers")]
    BadCorner {
        /// The word.
        word: String,
    },
    /// A reference of 0 (OBJ counts from 1).
    #[error("face corner '{word}' refers to {what} 0: OBJ numbers them from 1 (or from -1 backwards)")]
    ZeroReference {
        /// The word.
        word: String,
        /// `vertex`, `texture coordinate`, `normal`.
        what: &'static str,
    },
    /// A reference to something not (yet) defined.
    #[error(
        "face corner '{word}' refers to {what} {number}, but {} defined before this line",
        defined_before(what, *defined)
    )]
    OutOfRange {
        /// The word.
        word: String,
        /// `vertex`, `texture coordinate`, `normal`.
        what: &'static str,
        /// The number as written.
        number: i64,
        /// How many are defined before the line.
        defined: usize,
    },
    /// More vertices or triangles than the limits allow.
    #[error(
        "the OBJ file has more than {limit} {what}, the {limit_name} limit (raise it with --max-{limit_name}s)"
    )]
    TooMany {
        /// `"vertices"` or `"triangles"`.
        what: &'static str,
        /// The limit.
        limit: u64,
        /// The limit's name: `"particle"` or `"constraint"`.
        limit_name: &'static str,
    },
    /// A face of fewer than 3 corners.
    #[error("a face with {count} corner{}: a face needs at least 3", if *count == 1 { "" } else { "s" })]
    FaceTooSmall {
        /// Its corners.
        count: usize,
    },
    /// A face that uses one vertex twice.
    #[error("the face uses vertex {number} twice: a face needs distinct vertices")]
    RepeatedVertex {
        /// The OBJ vertex number (from 1).
        number: usize,
    },
    /// Vertex colours on some vertices only.
    #[error(
        "vertex colours (`v x y z r g b`) on some vertices but not on this one: give them on all or none"
    )]
    MixedColours,
    /// `usemtl` without a name.
    #[error("`usemtl` without a material name")]
    EmptyMaterial,
    /// No faces in the file.
    #[error("the OBJ file has no faces: a cloth mesh needs `f` statements")]
    NoFaces,
    /// Several objects and none chosen.
    #[error(
        "the OBJ file has {} objects ({}): choose with object = \"NAME\", or several with object = [\"A\", \"B\"]",
        names.len(), quoted(names)
    )]
    ChooseObject {
        /// The objects' names.
        names: Vec<String>,
    },
    /// A chosen object that is not in the file.
    #[error("the OBJ file has no object named '{name}'; its objects: {}", quoted(available))]
    NoSuchObject {
        /// The name asked for.
        name: String,
        /// The objects' names.
        available: Vec<String>,
    },
}

impl From<ReadProblem> for ObjProblem {
    /// A problem reading an OBJ file (see [`crate::bounded`]) as an OBJ file's problem.
    fn from(problem: ReadProblem) -> Self {
        match problem {
            ReadProblem::Io(e) => ObjProblem::Read(e.to_string()),
            ReadProblem::NotAFile => ObjProblem::NotAFile,
            ReadProblem::TooLarge { len, limit } => ObjProblem::TooLarge { len, limit },
        }
    }
}

/// `only 1 vertex is` / `only 3 vertices are` / `no normal is`.
fn defined_before(what: &str, n: usize) -> String {
    let plural = if what == "vertex" { "vertices".to_string() } else { format!("{what}s") };
    match n {
        0 => format!("no {what} is"),
        1 => format!("only 1 {what} is"),
        n => format!("only {n} {plural} are"),
    }
}

/// `"a", "b"` for messages (names escaped to one line).
fn quoted(names: &[String]) -> String {
    let shown: Vec<String> = names.iter().take(20).map(|n| format!("'{}'", n.escape_debug())).collect();
    let more = if names.len() > 20 { format!(" and {} more", names.len() - 20) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

/// An error reading an OBJ file: the line (from 1) where the file has one, and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{problem}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ObjError {
    /// The line at fault, if the problem is on one.
    pub line: Option<usize>,
    /// What is wrong.
    pub problem: ObjProblem,
}

impl ObjError {
    fn at(line: usize, problem: ObjProblem) -> Self {
        ObjError { line: Some(line), problem }
    }

    fn whole(problem: ObjProblem) -> Self {
        ObjError { line: None, problem }
    }
}

/// Reads the OBJ file at `path` (at most `max_bytes`, see [`crate::bounded`]) and takes the
/// objects `selection` names.
pub fn read_obj(path: &Path, selection: &ObjectSelection, max_bytes: u64) -> Result<ObjMesh, ObjError> {
    read_obj_limited(path, selection, &Limits { max_mesh_bytes: max_bytes, ..Limits::UNLIMITED })
}

/// Reads the OBJ file at `path` under resource limits: at most [`Limits::max_mesh_bytes`]
/// ([`crate::bounded`]), and the element counts of [`parse_obj_limited`].
pub fn read_obj_limited(
    path: &Path,
    selection: &ObjectSelection,
    limits: &Limits,
) -> Result<ObjMesh, ObjError> {
    let bytes = read_bounded(path, limits.max_mesh_bytes, Accept::RegularFiles)
        .map_err(|e| ObjError::whole(e.problem.into()))?;
    parse_obj_limited(&bytes, selection, limits)
}

/// Parses OBJ text and takes the objects `selection` names (see the [module docs](self)).
///
/// ```
/// use weft_io::obj::{ObjectSelection, parse_obj};
/// let text = "o sheet\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nf 1/1 2/2 3/3 4/4\n";
/// let mesh = parse_obj(text.as_bytes(), &ObjectSelection::Only).unwrap();
/// assert_eq!(mesh.triangles, vec![[0, 1, 2], [0, 2, 3]]);
/// assert_eq!(mesh.quads, vec![[0, 1]]);
/// assert_eq!((mesh.polygons.sizes(), mesh.polygons.corners()), (&[4][..], &[0, 1, 2, 3][..]));
/// assert_eq!(mesh.uvs[1], [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]]);
/// assert_eq!(mesh.triangle_lines, vec![10, 10]);
/// let e = parse_obj(b"v 0 0 0\nf 1 2 3\n", &ObjectSelection::Only).unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "line 2: face corner '2' refers to vertex 2, but only 1 vertex is defined before this line"
/// );
/// ```
pub fn parse_obj(bytes: &[u8], selection: &ObjectSelection) -> Result<ObjMesh, ObjError> {
    parse_obj_limited(bytes, selection, &Limits::UNLIMITED)
}

/// [`parse_obj`] under resource limits: a file with more vertices (`v`) than
/// [`Limits::max_particles`], or whose faces make more triangles than
/// [`Limits::max_constraints`], is refused at the line that crosses the limit, before the rest of
/// the file is read into memory.
///
/// ```
/// use weft_core::limits::Limits;
/// use weft_io::obj::{ObjectSelection, parse_obj_limited};
/// let limits = Limits { max_particles: 2, ..Limits::default() };
/// let e = parse_obj_limited(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", &ObjectSelection::Only, &limits);
/// assert_eq!(
///     e.unwrap_err().to_string(),
///     "line 3: the OBJ file has more than 2 vertices, the particle limit (raise it with --max-particles)"
/// );
/// ```
pub fn parse_obj_limited(
    bytes: &[u8],
    selection: &ObjectSelection,
    limits: &Limits,
) -> Result<ObjMesh, ObjError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
            return Err(ObjError::at(line, ObjProblem::NotUtf8));
        }
    };
    let scan = Scan::run(text, limits)?;
    if scan.faces.is_empty() {
        return Err(ObjError::whole(ObjProblem::NoFaces));
    }
    let chosen = scan.choose(selection)?;
    Ok(scan.build(&chosen))
}

/// One face as the line check read it.
#[derive(Debug, Clone)]
struct Face {
    line: u32,
    /// Range into [`Scan::corner_v`] / [`Scan::corner_vt`].
    start: u32,
    len: u32,
}

/// One object (a run of faces under one `o`/`g` name).
#[derive(Debug, Clone)]
struct Object {
    name: String,
    faces: std::ops::Range<usize>,
}

/// The line check: every statement checked, references resolved to 0-based numbers, lines kept.
#[derive(Debug, Default)]
struct Scan {
    /// Line of each `v`.
    v_lines: Vec<u32>,
    /// Each `v` (`x/w` in `f32`).
    v: Vec<[f32; 3]>,
    /// Each `vt` (u, v).
    vt: Vec<[f32; 2]>,
    vn_count: usize,
    faces: Vec<Face>,
    /// Vertex of each face corner (0-based).
    corner_v: Vec<u32>,
    /// Texture coordinate of each face corner (0-based), `u32::MAX` if none.
    corner_vt: Vec<u32>,
    objects: Vec<Object>,
    /// Whether the vertices carry colours (known from the first `v`).
    coloured: Option<bool>,
    /// Triangles the faces so far will be cut into.
    triangles: u64,
}

/// The first vertex a face's corners repeat, if any. Linear in the corners for a small face and
/// `n log n` for a large one (a face of millions of corners is no reason to hang).
fn repeated_vertex(corner: &[(u32, u32)], sorted: &mut Vec<u32>) -> Option<u32> {
    if corner.len() <= 16 {
        return corner
            .iter()
            .enumerate()
            .find(|&(k, c)| corner[..k].iter().any(|d| d.0 == c.0))
            .map(|(_, c)| c.0);
    }
    sorted.clear();
    sorted.extend(corner.iter().map(|c| c.0));
    sorted.sort_unstable();
    let twice: std::collections::HashSet<u32> =
        sorted.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    // The one a left-to-right reading meets again first, as for a small face.
    let mut seen = std::collections::HashSet::new();
    corner.iter().map(|c| c.0).filter(|v| twice.contains(v)).find(|&v| !seen.insert(v))
}

const NO_VT: u32 = u32::MAX;

/// Checks that `word` is a number (colours and normals: read, not kept).
fn any_number(statement: &'static str, word: &str, line: usize) -> Result<(), ObjError> {
    word.parse::<f32>()
        .map(|_| ())
        .map_err(|_| ObjError::at(line, ObjProblem::NotANumber { statement, word: word.to_string() }))
}

/// Parses a finite `f32` (with `str::parse`).
fn number(statement: &'static str, word: &str, line: usize) -> Result<f32, ObjError> {
    match word.parse::<f32>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(ObjError::at(line, ObjProblem::NotFinite { statement, word: word.to_string() })),
        Err(_) => Err(ObjError::at(line, ObjProblem::NotANumber { statement, word: word.to_string() })),
    }
}

impl Scan {
    /// Checks every line of `text` in order, under `limits`.
    fn run(text: &str, limits: &Limits) -> Result<Scan, ObjError> {
        let mut s = Scan::default();
        let mut name = UNNAMED_OBJECT.to_string();
        let mut object_start = 0usize;
        let (mut corner, mut sorted) = (Vec::new(), Vec::new());
        for (i, raw) in text.split('\n').enumerate() {
            let line_no = i + 1;
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let mut words = line.split_whitespace();
            let Some(first) = words.next() else { continue };
            let words: Vec<&str> = words.collect();
            match first {
                "v" => s.vertex(&words, line_no, limits)?,
                "vt" => {
                    if words.len() < 2 {
                        let expected = "2 or 3 (u v [w]): weft reads two-dimensional UVs";
                        let problem = ObjProblem::Count { statement: "vt", found: words.len(), expected };
                        return Err(ObjError::at(line_no, problem));
                    }
                    s.vt.push([number("vt", words[0], line_no)?, number("vt", words[1], line_no)?]);
                }
                "vn" => {
                    if words.len() < 3 {
                        let problem =
                            ObjProblem::Count { statement: "vn", found: words.len(), expected: "3 (x y z)" };
                        return Err(ObjError::at(line_no, problem));
                    }
                    for word in &words[..3] {
                        any_number("vn", word, line_no)?;
                    }
                    s.vn_count += 1;
                }
                "f" => s.face(&words, line_no, limits, &mut corner, &mut sorted)?,
                "o" | "g" => {
                    if s.faces.len() > object_start {
                        s.objects.push(Object { name: name.clone(), faces: object_start..s.faces.len() });
                        object_start = s.faces.len();
                    }
                    // The rest of the line after its first character, trimmed.
                    let first_len = line.chars().next().map_or(0, char::len_utf8);
                    name = line[first_len..].trim().to_string();
                    if name.is_empty() {
                        name = UNNAMED_OBJECT.to_string();
                    }
                }
                "usemtl" if line.split_once(' ').unwrap_or_default().1.trim().is_empty() => {
                    return Err(ObjError::at(line_no, ObjProblem::EmptyMaterial));
                }
                _ => {}
            }
        }
        // The last object is kept even without faces.
        s.objects.push(Object { name, faces: object_start..s.faces.len() });
        Ok(s)
    }

    /// A `v` statement: `x y z`, `x y z w` (divided by `w`) or `x y z r g b` (colours checked,
    /// ignored; every vertex of a file with or without them).
    fn vertex(&mut self, words: &[&str], line_no: usize, limits: &Limits) -> Result<(), ObjError> {
        let count = words.len();
        if !(count == 3 || count == 4 || count == 6) {
            let expected = "3 (x y z), 4 (x y z w) or 6 (x y z r g b)";
            return Err(ObjError::at(line_no, ObjProblem::Count { statement: "v", found: count, expected }));
        }
        let mut p = [0.0f32; 3];
        for (slot, word) in p.iter_mut().zip(words) {
            *slot = number("v", word, line_no)?;
        }
        if count == 4 {
            let w = number("v", words[3], line_no)?;
            if w == 0.0 {
                return Err(ObjError::at(line_no, ObjProblem::ZeroW));
            }
            for c in p.iter_mut() {
                *c /= w;
            }
            if let Some(bad) = p.iter().find(|c| !c.is_finite()) {
                let word = format!("{bad} (after dividing by w = {w})");
                return Err(ObjError::at(line_no, ObjProblem::NotFinite { statement: "v", word }));
            }
        }
        if count == 6 {
            for word in &words[3..] {
                any_number("v", word, line_no)?;
            }
        }
        let coloured = count == 6;
        if *self.coloured.get_or_insert(coloured) != coloured {
            return Err(ObjError::at(line_no, ObjProblem::MixedColours));
        }
        if self.v.len() as u64 >= limits.max_particles {
            let problem =
                ObjProblem::TooMany { what: "vertices", limit: limits.max_particles, limit_name: "particle" };
            return Err(ObjError::at(line_no, problem));
        }
        self.v.push(p);
        self.v_lines.push(line_no as u32);
        Ok(())
    }

    /// An `f` statement: at least three corners, no vertex twice, the triangles within the limit.
    /// `corner` and `sorted` are buffers kept from face to face.
    fn face(
        &mut self,
        words: &[&str],
        line_no: usize,
        limits: &Limits,
        corner: &mut Vec<(u32, u32)>,
        sorted: &mut Vec<u32>,
    ) -> Result<(), ObjError> {
        if words.len() < 3 {
            return Err(ObjError::at(line_no, ObjProblem::FaceTooSmall { count: words.len() }));
        }
        corner.clear();
        for word in words {
            corner.push(self.corner(word, line_no)?);
        }
        if let Some(v) = repeated_vertex(corner, sorted) {
            return Err(ObjError::at(line_no, ObjProblem::RepeatedVertex { number: v as usize + 1 }));
        }
        self.triangles += corner.len() as u64 - 2;
        if self.triangles > limits.max_constraints {
            let problem = ObjProblem::TooMany {
                what: "triangles",
                limit: limits.max_constraints,
                limit_name: "constraint",
            };
            return Err(ObjError::at(line_no, problem));
        }
        let start = self.corner_v.len() as u32;
        self.corner_v.extend(corner.iter().map(|c| c.0));
        self.corner_vt.extend(corner.iter().map(|c| c.1));
        self.faces.push(Face { line: line_no as u32, start, len: corner.len() as u32 });
        Ok(())
    }

    /// One face corner: its vertex and texture coordinate (0-based; [`NO_VT`] if none).
    fn corner(&self, word: &str, line: usize) -> Result<(u32, u32), ObjError> {
        let bad = || ObjError::at(line, ObjProblem::BadCorner { word: word.to_string() });
        let mut parts = word.split('/');
        let mut refs = [None; 3];
        for slot in refs.iter_mut() {
            match parts.next() {
                Some("") | None => {}
                Some(p) => *slot = Some(p.parse::<i64>().map_err(|_| bad())?),
            }
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        let defined = [self.v.len(), self.vt.len(), self.vn_count];
        let what = ["vertex", "texture coordinate", "normal"];
        let mut resolved = [NO_VT; 3];
        for k in 0..3 {
            let Some(n) = refs[k] else {
                if k == 0 {
                    return Err(bad());
                }
                continue;
            };
            let index = match n {
                0 => {
                    return Err(ObjError::at(
                        line,
                        ObjProblem::ZeroReference { word: word.to_string(), what: what[k] },
                    ));
                }
                n if n > 0 => n - 1,
                n => defined[k] as i64 + n,
            };
            if index < 0 || index >= defined[k] as i64 {
                return Err(ObjError::at(
                    line,
                    ObjProblem::OutOfRange {
                        word: word.to_string(),
                        what: what[k],
                        number: n,
                        defined: defined[k],
                    },
                ));
            }
            resolved[k] = index as u32;
        }
        Ok((resolved[0], resolved[1]))
    }

    /// The objects to take, as indices into [`Scan::objects`].
    fn choose(&self, selection: &ObjectSelection) -> Result<Vec<usize>, ObjError> {
        // A set beside the list: a file of millions of objects must not take quadratic time.
        let mut names: Vec<String> = Vec::new();
        let mut known = std::collections::HashSet::new();
        for o in self.objects.iter().filter(|o| !o.faces.is_empty()) {
            if known.insert(o.name.as_str()) {
                names.push(o.name.clone());
            }
        }
        let non_empty = (0..self.objects.len()).filter(|&o| !self.objects[o].faces.is_empty());
        match selection {
            ObjectSelection::Only if names.len() == 1 => Ok(non_empty.collect()),
            ObjectSelection::Only => Err(ObjError::whole(ObjProblem::ChooseObject { names })),
            ObjectSelection::Named(wanted) => {
                if let Some(missing) = wanted.iter().find(|w| !known.contains(w.as_str())) {
                    return Err(ObjError::whole(ObjProblem::NoSuchObject {
                        name: missing.clone(),
                        available: names,
                    }));
                }
                let wanted: std::collections::HashSet<&str> = wanted.iter().map(String::as_str).collect();
                Ok(non_empty.filter(|&o| wanted.contains(self.objects[o].name.as_str())).collect())
            }
        }
    }

    fn has_uvs(&self, face: &Face) -> bool {
        self.corner_vt[face.start as usize..(face.start + face.len) as usize].iter().all(|&t| t != NO_VT)
    }

    /// The cloth mesh of the chosen objects.
    fn build(&self, chosen: &[usize]) -> ObjMesh {
        let mut mesh = ObjMesh::default();
        let faces: Vec<&Face> =
            chosen.iter().flat_map(|&o| self.faces[self.objects[o].faces.clone()].iter()).collect();
        let mut taken = std::collections::HashSet::new();
        for &o in chosen {
            if taken.insert(self.objects[o].name.as_str()) {
                mesh.objects.push(self.objects[o].name.clone());
            }
        }
        // Particles: the used vertices in file order.
        let mut particle = vec![u32::MAX; self.v.len()];
        for f in &faces {
            for c in f.start..f.start + f.len {
                particle[self.corner_v[c as usize] as usize] = 0;
            }
        }
        for (v, slot) in particle.iter_mut().enumerate() {
            if *slot == 0 {
                *slot = mesh.positions.len() as u32;
                mesh.positions.push(self.v[v]);
                mesh.vertex_numbers.push(v as u32 + 1);
                mesh.vertex_lines.push(self.v_lines[v]);
            }
        }
        let with_uvs = faces.iter().all(|f| self.has_uvs(f));
        mesh.first_face_without_uv = faces.iter().find(|f| !self.has_uvs(f)).map(|f| f.line);
        let (mut sizes, mut corners, mut corner_uvs) = (Vec::new(), Vec::new(), Vec::new());
        for f in &faces {
            let range = f.start as usize..(f.start + f.len) as usize;
            let p: Vec<u32> = self.corner_v[range.clone()].iter().map(|&v| particle[v as usize]).collect();
            let uv: Vec<[f32; 2]> = if with_uvs {
                self.corner_vt[range].iter().map(|&t| self.vt[t as usize]).collect()
            } else {
                Vec::new()
            };
            sizes.push(f.len);
            corners.extend_from_slice(&p);
            corner_uvs.extend_from_slice(&uv);
            let first = mesh.triangles.len() as u32;
            let mut push = |k: [usize; 3]| {
                mesh.triangles.push(k.map(|k| p[k]));
                mesh.triangle_lines.push(f.line);
                if with_uvs {
                    mesh.uvs.push(k.map(|k| uv[k]));
                }
            };
            match p.len() {
                3 => push([0, 1, 2]),
                4 => {
                    let pos = |k: usize| mesh_pos(&self.v, &self.corner_v, f.start, k);
                    if dist2(pos(1), pos(3)) < dist2(pos(0), pos(2)) {
                        push([0, 1, 3]);
                        push([1, 2, 3]);
                    } else {
                        push([0, 1, 2]);
                        push([0, 2, 3]);
                    }
                    mesh.quads.push([first, first + 1]);
                }
                n => {
                    for k in 1..n - 1 {
                        push([0, k, k + 1]);
                    }
                }
            }
            mesh.face_counts[p.len().min(5) - 3] += 1;
        }
        // The scanner refused faces of fewer than 3 corners, repeated vertices and non-finite UVs.
        mesh.polygons = Polygons::new(sizes, corners, corner_uvs)
            .expect("faces of 3 or more distinct vertices with finite UVs, checked by the scanner");
        mesh
    }
}

/// Position of corner `k` of the face whose corners start at `start`.
fn mesh_pos(v: &[[f32; 3]], corner_v: &[u32], start: u32, k: usize) -> [f32; 3] {
    v[corner_v[start as usize + k] as usize]
}

/// Squared distance in `f64`.
fn dist2(a: [f32; 3], b: [f32; 3]) -> f64 {
    (0..3).map(|i| (a[i] as f64 - b[i] as f64).powi(2)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ObjMesh, ObjError> {
        parse_obj(text.as_bytes(), &ObjectSelection::Only)
    }

    fn fails(text: &str) -> (Option<usize>, String) {
        let e = parse(text).unwrap_err();
        (e.line, e.problem.to_string())
    }

    const SQUARE: &str = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n";

    #[test]
    fn quads_are_cut_along_the_shorter_diagonal() {
        // A rhombus whose 1–3 diagonal is the shorter.
        let m = parse("v 0 0 0\nv 2 -0.5 0\nv 4 0 0\nv 2 0.5 0\nf 1 2 3 4\n").unwrap();
        assert_eq!(m.triangles, vec![[0, 1, 3], [1, 2, 3]]);
        assert_eq!(m.quads, vec![[0, 1]]);
        assert_eq!(m.face_counts, [0, 1, 0]);
        let m = parse(&format!("{SQUARE}f 1 2 3 4\n")).unwrap();
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
    }

    #[test]
    fn ngons_are_fans_and_lines_are_kept() {
        let m = parse("v 0 0 0\nv 1 0 0\nv 2 1 0\nv 1 2 0\nv 0 1 0\nl 1 2 3\nf 1 2 3 4 5\n").unwrap();
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3], [0, 3, 4]]);
        assert_eq!(m.polygons.faces().collect::<Vec<_>>(), vec![&[0, 1, 2, 3, 4][..]]);
        assert_eq!(m.triangle_lines, vec![7, 7, 7]);
        assert!(m.quads.is_empty());
        assert_eq!(m.face_counts, [0, 0, 1]);
    }

    #[test]
    fn uv_seams_do_not_split_particles() {
        // Two triangles sharing the edge 2–3 (OBJ numbers) with different vt on each side.
        let text =
            format!("{SQUARE}vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 0.5 0.5\nf 1/1 2/2 3/3\nf 1/5 3/3 4/4\n");
        let m = parse(&text).unwrap();
        assert_eq!(m.positions.len(), 4);
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
        assert_eq!(m.uvs[1][0], [0.5, 0.5]);
        assert_eq!(m.uvs[0][0], [0.0, 0.0]);
        // Missing vt on one face: no UVs, and the face is named.
        let m = parse(&format!("{SQUARE}vt 0 0\nf 1/1 2/1 3/1\nf 1 3 4\n")).unwrap();
        assert!(m.uvs.is_empty());
        assert_eq!(m.first_face_without_uv, Some(7));
    }

    #[test]
    fn particles_are_the_used_vertices_in_file_order() {
        let text = format!("{SQUARE}v 5 5 5\no a\nf 4 3 1\no b\nf -1 -2 -4\n");
        let m = parse_obj(text.as_bytes(), &ObjectSelection::Named(vec!["a".into()])).unwrap();
        assert_eq!(m.vertex_numbers, vec![1, 3, 4]);
        assert_eq!(m.triangles, vec![[2, 1, 0]]);
        assert_eq!(m.vertex_lines, vec![1, 3, 4]);
        let both = parse_obj(text.as_bytes(), &ObjectSelection::Named(vec!["b".into(), "a".into()])).unwrap();
        assert_eq!(both.objects, vec!["a", "b"]);
        assert_eq!(both.vertex_numbers, vec![1, 2, 3, 4, 5]);
        assert_eq!(both.triangles, vec![[3, 2, 0], [4, 3, 1]]);
    }

    #[test]
    fn objects_must_be_chosen_and_exist() {
        let text = format!("{SQUARE}o shirt\nf 1 2 3\ng collar\nf 1 3 4\n");
        let (line, msg) = fails(&text);
        assert_eq!(line, None);
        assert!(msg.contains("2 objects ('shirt', 'collar')") && msg.contains("object = "), "{msg}");
        // A name with no faces after it is not an object to choose.
        assert_eq!(parse(&format!("{SQUARE}o shirt\nf 1 2 3\no empty\n")).unwrap().objects, ["shirt"]);
        let e = parse_obj(text.as_bytes(), &ObjectSelection::Named(vec!["pants".into()])).unwrap_err();
        assert!(e.to_string().contains("no object named 'pants'; its objects: 'shirt', 'collar'"), "{e}");
        let m = parse_obj(text.as_bytes(), &ObjectSelection::Named(vec!["collar".into()])).unwrap();
        assert_eq!(m.triangles.len(), 1);
        // A repeated name is one object.
        let m = parse(&format!("{SQUARE}o shirt\nf 1 2 3\no shirt\nf 1 3 4\n")).unwrap();
        assert_eq!(m.triangles.len(), 2);
        // Faces before any name.
        let m = parse(&format!("{SQUARE}f 1 2 3\n")).unwrap();
        assert_eq!(m.objects, vec![UNNAMED_OBJECT]);
    }

    #[test]
    fn every_mistake_names_its_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("v 0 0 0\nv 1 0 nan\n", 2, "'nan' is not a finite"),
            ("v 0 0 0\nv 1 0 1e39\n", 2, "'1e39' is not a finite"),
            ("v 0 0 0\nv 1 0 x\n", 2, "'x' is not a number"),
            ("v 0 0\n", 1, "`v` has 2 numbers"),
            ("v 0 0 0 0\n", 1, "w of 0"),
            ("v 0 0 0\nvt 0\n", 2, "`vt` has 1 number:"),
            ("v 0 0 0\nvt 0 inf\n", 2, "not a finite"),
            ("v 0 0 0\nvn 0 0 q\n", 2, "'q' is not a number"),
            ("v 0 0 0\nv 1 0 0\nf 1 2\n", 3, "2 corners: a face needs at least 3"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", 4, "refers to vertex 4, but only 3"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4\n", 4, "refers to vertex -4"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", 4, "refers to vertex 0"),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1 2/1 3/1\n",
                4,
                "texture coordinate 1, but no texture coordinate is",
            ),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1//2 2 3\n", 4, "normal 2"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 a\n", 4, "'a' is not v, v/vt"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1/1/1 2 3\n", 4, "is not v, v/vt"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 2\n", 4, "uses vertex 2 twice"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl\nf 1 2 3\n", 4, "`usemtl` without"),
            ("v 0 0 0\nv 1 0 0\nf 3 1 2\nv 0 1 0\n", 3, "refers to vertex 3, but only 2"),
        ];
        for &(text, line, says) in cases {
            let (l, msg) = fails(text);
            assert_eq!(l, Some(line), "{text:?}: {msg}");
            assert!(msg.contains(says), "{text:?}: {msg}");
        }
        assert_eq!(fails("v 0 0 0\n# nothing\n"), (None, ObjProblem::NoFaces.to_string()));
        let e = parse_obj(b"v 0 0 0\nv 1 0 \xff\n", &ObjectSelection::Only).unwrap_err();
        assert_eq!((e.line, e.problem), (Some(2), ObjProblem::NotUtf8));
    }

    #[test]
    fn w_and_colours_and_crlf() {
        let m = parse("v 2 4 6 2\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 3\r\n").unwrap();
        assert_eq!(m.positions[0], [1.0, 2.0, 3.0]);
        let m = parse("v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 1\nf 1 2 3\n").unwrap();
        assert_eq!(m.positions.len(), 3);
        let (line, msg) = fails("v 0 0 0 1 0 0\nv 1 0 0\nv 0 1 0 0 0 1\nf 1 2 3\n");
        assert_eq!(line, Some(2));
        assert!(msg.contains("colours"), "{msg}");
    }

    #[test]
    fn files_are_checked_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.obj");
        std::fs::write(&path, format!("{SQUARE}f 1 2 3\n")).unwrap();
        assert_eq!(read_obj(&path, &ObjectSelection::Only, MAX_OBJ_BYTES).unwrap().triangles.len(), 1);
        let e = read_obj(&path, &ObjectSelection::Only, 10).unwrap_err();
        assert!(matches!(e.problem, ObjProblem::TooLarge { limit: 10, .. }), "{e}");
        let e = read_obj(dir.path(), &ObjectSelection::Only, MAX_OBJ_BYTES).unwrap_err();
        assert!(matches!(e.problem, ObjProblem::NotAFile | ObjProblem::Read(_)), "{e}");
        let e = read_obj(&dir.path().join("none.obj"), &ObjectSelection::Only, MAX_OBJ_BYTES).unwrap_err();
        assert!(matches!(e.problem, ObjProblem::Read(_)), "{e}");
    }
}
