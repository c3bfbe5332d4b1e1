//! ASCII USD caches (`NAME.usda`): a mesh with time-sampled points and normals.
//!
//! The layer has a time code per sample (`startTimeCode = 0`, `endTimeCode = samples − 1`,
//! `timeCodesPerSecond = framesPerSecond = fps`), is in metres (`metersPerUnit = 1`) with y up,
//! and holds one root `Xform` named `weft` (the default prim) with one child named after the
//! cloth:
//!
//! ```text
//! #usda 1.0
//! (
//!     defaultPrim = "weft"
//!     endTimeCode = 1
//!     framesPerSecond = 10.0
//!     metersPerUnit = 1
//!     startTimeCode = 0
//!     timeCodesPerSecond = 10.0
//!     upAxis = "Y"
//! )
//!
//! def Xform "weft"
//! {
//!     def Mesh "seed"
//!     {
//!         uniform bool doubleSided = true
//!         int[] faceVertexCounts = [3]
//!         int[] faceVertexIndices = [0, 1, 2]
//!         normal3f[] normals (
//!             interpolation = "vertex"
//!         )
//!         texCoord2f[] primvars:st = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)] (
//!             interpolation = "faceVarying"
//!         )
//!         int[] primvars:st:indices = [0, 1, 2]
//!         uniform token subdivisionScheme = "none"
//!         point3f[] points.timeSamples = {
//!             0: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)],
//!             1: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.9, 0.0)],
//!         }
//!         normal3f[] normals.timeSamples = {
//!             0: [(0.0, 0.0, 1.0), (0.0, 0.0, 1.0), (0.0, 0.0, 1.0)],
//!             1: [(0.0, 0.0, 1.0), (0.0, 0.0, 1.0), (0.0, 0.0, 1.0)],
//!         }
//!         float3[] extent.timeSamples = {
//!             0: [(0.0, 0.0, 0.0), (1.0, 1.0, 0.0)],
//!             1: [(0.0, 0.0, 0.0), (1.0, 0.9, 0.0)],
//!         }
//!     }
//! }
//! ```
//!
//! The faces are written as given ([`CacheSpec::polygons`]: `faceVertexCounts` of 3, 4 or more);
//! `normals` holds one unit normal per point and sample ([`weft_core::normals`]), interpolated per
//! vertex. A cloth with UVs gets them as the primvar `st`, face-varying (one value per corner of each face,
//! so a UV seam is kept without splitting a point) and indexed: `primvars:st` holds the distinct
//! UVs in order of first use and `primvars:st:indices` the one for each entry of
//! `faceVertexIndices`. A cloth without UVs has no `st`.
//!
//! A cloth without faces becomes a `Points` prim with the same `points.timeSamples` and
//! `extent.timeSamples` and one constant width, [`POINT_WIDTH`]. The prim is named after the
//! cloth, with every character USD does not allow in a prim name replaced by `_` (and a leading
//! `_` if the name starts with a digit). Numbers are written with Rust's shortest round-trip
//! formatting in its `Debug` form (`1.0`, `0.1`, `1e-7`, `3.4028235e38`), so the `f32` positions
//! read back exactly. (The `Display` form spells `3.4e38` as a 39-digit integer, which USD's text
//! parser first tries to read as a 64-bit integer and warns about.)
//!
//! The file is streamed: the header and topology when the writer is created, one time sample of
//! points per [`CacheWriter::write_sample`], and the normals, extents and closing lines in
//! [`CacheWriter::finish`]. Meanwhile the extents are kept in memory (24 bytes per sample) and the
//! normals' samples in a scratch file beside the cache, `NAME.usda.normals.partial`, since USD
//! wants every sample of one attribute together; `finish` copies them in and removes it.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;

use weft_core::polygons::Polygons;

use crate::cache::{CacheMark, CacheSpec, CacheWriter, SampleCheck, check_prefix, invalid};
use crate::staged::{self, Staged, with_path, write_all};
use weft_core::normals::vertex_normals;

/// Diameter in m given to each point of a `Points` prim (a cloth without triangles).
pub const POINT_WIDTH: f32 = 0.01;

/// Name of the root prim.
pub const ROOT_PRIM: &str = "weft";

/// `name` as a USD prim name: `[A-Za-z_][A-Za-z0-9_]*`.
///
/// ```
/// assert_eq!(weft_io::usd::prim_name("flag-2.v1"), "flag_2_v1");
/// assert_eq!(weft_io::usd::prim_name("3d"), "_3d");
/// ```
pub fn prim_name(name: &str) -> String {
    let mut out: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

/// Streams a USDA cache to `NAME.usda.partial`, renamed to `NAME.usda` by
/// [`CacheWriter::finish`].
#[derive(Debug)]
pub struct UsdWriter {
    // Declared before `staged`: the file is closed before a drop removes it.
    out: BufWriter<File>,
    staged: Staged,
    path: PathBuf,
    check: SampleCheck,
    /// `(min, max)` corners of each sample written.
    extents: Vec<[[f32; 3]; 2]>,
    /// The normals of a mesh, `None` for points.
    normals: Option<NormalSamples>,
    line: String,
}

/// The time samples of a mesh's normals, streamed to a scratch file `NAME.usda.normals.partial`
/// beside the cache (a USD attribute's samples must be written together, after the points'),
/// copied into the cache by [`CacheWriter::finish`] and removed.
#[derive(Debug)]
struct NormalSamples {
    // Declared before `staged`: the file is closed before a drop removes it.
    out: BufWriter<File>,
    /// Never committed: its drop removes the scratch file (unless the cache is suspended).
    staged: Staged,
    /// `NAME.usda.normals` (the file is this + `.partial`).
    path: PathBuf,
    polygons: Polygons,
    sums: Vec<[f64; 3]>,
    values: Vec<[f32; 3]>,
}

impl NormalSamples {
    fn path(spec: &CacheSpec<'_>) -> PathBuf {
        spec.path(".usda.normals")
    }

    fn new(spec: &CacheSpec<'_>, out: BufWriter<File>, staged: Staged) -> Self {
        NormalSamples {
            out,
            staged,
            path: NormalSamples::path(spec),
            polygons: spec.polygons.clone(),
            sums: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Appends sample `k`'s normals, computed from its positions.
    fn write(&mut self, k: u32, positions: &[[f32; 3]], line: &mut String) -> io::Result<()> {
        vertex_normals(positions, &self.polygons, &mut self.sums, &mut self.values);
        line.clear();
        let _ = write!(line, "            {k}: [");
        for (i, &n) in self.values.iter().enumerate() {
            if i > 0 {
                line.push_str(", ");
            }
            tuple(line, n);
        }
        line.push_str("],\n");
        write_all(&mut self.out, line.as_bytes(), &self.path)
    }
}

/// Appends `(x, y, z)`.
fn tuple(out: &mut String, p: [f32; 3]) {
    // Writing to a String cannot fail.
    let _ = write!(out, "({:?}, {:?}, {:?})", p[0], p[1], p[2]);
}

impl UsdWriter {
    /// Creates the temporary file and writes the layer header, the prims and their topology.
    pub fn create(spec: &CacheSpec<'_>) -> io::Result<Self> {
        spec.validate()?;
        let path = spec.path(".usda");
        let mut staged = Staged::default();
        let mut out = staged.create(path.clone())?;
        write_all(&mut out, head(spec).as_bytes(), &path)?;
        let normals = if spec.polygons.is_empty() {
            None
        } else {
            let mut scratch = Staged::default();
            let out = scratch.create(NormalSamples::path(spec))?;
            Some(NormalSamples::new(spec, out, scratch))
        };
        Ok(UsdWriter {
            out,
            staged,
            path,
            check: SampleCheck::new(spec),
            extents: Vec::with_capacity(spec.samples.min(1 << 20) as usize),
            normals,
            line: String::new(),
        })
    }

    /// Reopens the temporary files an earlier run left at `mark` (see
    /// [`crate::cache::resume_cache`]): the cache must start with this spec's header and
    /// topology, and `mark.state` must hold, for a mesh, the length of the normals' scratch file
    /// (8 bytes), then the extents of its `mark.samples` samples (24 bytes each).
    pub(crate) fn resume(spec: &CacheSpec<'_>, mark: &CacheMark) -> io::Result<Self> {
        let path = spec.path(".usda");
        let mesh = !spec.polygons.is_empty();
        let lead = if mesh { 8 } else { 0 };
        if mark.state.len() as u64 != lead as u64 + mark.samples as u64 * 24 {
            return Err(invalid(format!(
                "cache '{}': the checkpoint holds {} bytes of state for {} samples; {lead} + 24 each",
                spec.name,
                mark.state.len(),
                mark.samples
            )));
        }
        let (scratch_len, extents) = mark.state.split_at(lead);
        let extents: Vec<[[f32; 3]; 2]> = extents
            .chunks_exact(24)
            .map(|c| {
                let f = |i: usize| f32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]]);
                [[f(0), f(1), f(2)], [f(3), f(4), f(5)]]
            })
            .collect();
        check_prefix(&path, head(spec).as_bytes())?;
        let normals = match <[u8; 8]>::try_from(scratch_len) {
            Ok(len) => {
                let mut scratch = Staged::default();
                let out = scratch.reopen(NormalSamples::path(spec), u64::from_le_bytes(len))?;
                Some(NormalSamples::new(spec, out, scratch))
            }
            Err(_) => None,
        };
        let mut staged = Staged::default();
        let out = staged.reopen(path.clone(), mark.bytes)?;
        Ok(UsdWriter {
            out,
            staged,
            path,
            check: SampleCheck::resumed(spec, mark.samples),
            extents,
            normals,
            line: String::new(),
        })
    }
}

/// The layer header, the prims and their topology, up to the opening of `points.timeSamples`.
fn head(spec: &CacheSpec<'_>) -> String {
    let mut head = String::new();
    let fps = format!("{:?}", spec.fps);
    let end = spec.samples - 1;
    let _ = write!(
        head,
        "#usda 1.0\n(\n    defaultPrim = \"{ROOT_PRIM}\"\n    endTimeCode = {end}\n    \
         framesPerSecond = {fps}\n    metersPerUnit = 1\n    startTimeCode = 0\n    \
         timeCodesPerSecond = {fps}\n    upAxis = \"Y\"\n)\n\n\
         def Xform \"{ROOT_PRIM}\"\n{{\n"
    );
    let prim = prim_name(spec.name);
    if spec.polygons.is_empty() {
        let _ = write!(
            head,
            "    def Points \"{prim}\"\n    {{\n        float[] widths = [{POINT_WIDTH:?}] (\n            \
             interpolation = \"constant\"\n        )\n"
        );
    } else {
        let _ = write!(
            head,
            "    def Mesh \"{prim}\"\n    {{\n        uniform bool doubleSided = true\n        \
             int[] faceVertexCounts = ["
        );
        for (i, n) in spec.polygons.sizes().iter().enumerate() {
            let _ = write!(head, "{}{n}", if i == 0 { "" } else { ", " });
        }
        head.push_str("]\n        int[] faceVertexIndices = [");
        for (i, p) in spec.polygons.corners().iter().enumerate() {
            let _ = write!(head, "{}{p}", if i == 0 { "" } else { ", " });
        }
        head.push_str("]\n        normal3f[] normals (\n            interpolation = \"vertex\"\n        )\n");
        if !spec.polygons.uvs().is_empty() {
            let (values, corners) = spec.indexed_uvs();
            head.push_str("        texCoord2f[] primvars:st = [");
            for (i, uv) in values.iter().enumerate() {
                let _ = write!(head, "{}({:?}, {:?})", if i == 0 { "" } else { ", " }, uv[0], uv[1]);
            }
            head.push_str(
                "] (\n            interpolation = \"faceVarying\"\n        )\n        \
                 int[] primvars:st:indices = [",
            );
            for (i, c) in corners.iter().enumerate() {
                let _ = write!(head, "{}{c}", if i == 0 { "" } else { ", " });
            }
            head.push_str("]\n");
        }
        head.push_str("        uniform token subdivisionScheme = \"none\"\n");
    }
    head.push_str("        point3f[] points.timeSamples = {\n");
    head
}

impl CacheWriter for UsdWriter {
    fn mark(&mut self) -> io::Result<CacheMark> {
        let bytes = staged::sync(&mut self.out, &self.path)?;
        let mut state = Vec::with_capacity(8 + 24 * self.extents.len());
        if let Some(n) = &mut self.normals {
            state.extend(staged::sync(&mut n.out, &n.path)?.to_le_bytes());
        }
        state.extend(self.extents.iter().flatten().flatten().flat_map(|c| c.to_le_bytes()));
        Ok(CacheMark { samples: self.check.written(), bytes, state })
    }

    fn write_sample(&mut self, positions: &[[f32; 3]]) -> io::Result<()> {
        let k = self.check.next(positions)?;
        let line = &mut self.line;
        line.clear();
        let _ = write!(line, "            {k}: [");
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for (i, &p) in positions.iter().enumerate() {
            if i > 0 {
                line.push_str(", ");
            }
            tuple(line, p);
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
        line.push_str("],\n");
        write_all(&mut self.out, line.as_bytes(), &self.path)?;
        if let Some(n) = &mut self.normals {
            n.write(k, positions, line)?;
        }
        self.extents.push([lo, hi]);
        self.check.done();
        Ok(())
    }

    fn suspend(mut self: Box<Self>) {
        self.staged.keep();
        if let Some(n) = &mut self.normals {
            n.staged.keep();
        }
    }

    fn finish(self: Box<Self>) -> io::Result<Vec<PathBuf>> {
        let UsdWriter { mut out, staged, path, check, extents, normals, .. } = *self;
        check.complete()?;
        write_all(&mut out, b"        }\n", &path)?;
        if let Some(NormalSamples { out: scratch_out, staged: scratch, path: scratch_path, .. }) = normals {
            staged::close(scratch_out).map_err(|e| with_path(e, &scratch_path))?;
            let temp = staged::partial_path(&scratch_path);
            let mut samples = File::open(&temp).map_err(|e| with_path(e, &temp))?;
            write_all(&mut out, b"        normal3f[] normals.timeSamples = {\n", &path)?;
            io::copy(&mut samples, &mut out).map_err(|e| with_path(e, &temp))?;
            write_all(&mut out, b"        }\n", &path)?;
            // Dropping the uncommitted scratch set removes its file.
            drop(samples);
            drop(scratch);
        }
        let mut tail = String::from("        float3[] extent.timeSamples = {\n");
        for (k, [lo, hi]) in extents.into_iter().enumerate() {
            let _ = write!(tail, "            {k}: [");
            tuple(&mut tail, lo);
            tail.push_str(", ");
            tuple(&mut tail, hi);
            tail.push_str("],\n");
        }
        tail.push_str("        }\n    }\n}\n");
        write_all(&mut out, tail.as_bytes(), &path)?;
        staged::close(out).map_err(|e| with_path(e, &path))?;
        staged.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{CacheFormat, create_cache};

    const SAMPLES: [[[f32; 3]; 3]; 2] = [
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        [[0.0, 0.0, 0.0], [1.0, 0.0, -0.25], [0.1, 0.9, 1e-7]],
    ];

    fn bake(name: &str, polygons: &Polygons) -> String {
        let dir = tempfile::tempdir().unwrap();
        let spec = CacheSpec { dir: dir.path(), name, polygons, point_count: 3, fps: 24.0, samples: 2 };
        let mut w = create_cache(CacheFormat::Usd, &spec).unwrap();
        for sample in SAMPLES {
            w.write_sample(&sample).unwrap();
        }
        let files = w.finish().unwrap();
        assert_eq!(files, vec![dir.path().join(format!("{name}.usda"))]);
        // The normals' scratch file is gone.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        std::fs::read_to_string(&files[0]).unwrap()
    }

    #[test]
    fn mesh_layer_is_exact() {
        let triangle =
            Polygons::from_triangles(&[[0, 1, 2]], &[[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]]).unwrap();
        let text = bake("seed", &triangle);
        // Sample 1's normal, from the cross product of its two edges (one triangle: every point
        // has the face's normal).
        let [a, b, c] = SAMPLES[1].map(|p| p.map(f64::from));
        let (e, f) = ([b[0] - a[0], b[1] - a[1], b[2] - a[2]], [c[0] - a[0], c[1] - a[1], c[2] - a[2]]);
        let n = [e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0]];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        let n1 = format!("({:?}, {:?}, {:?})", (n[0] / len) as f32, (n[1] / len) as f32, (n[2] / len) as f32);
        let expected = format!(
            r#"#usda 1.0
(
    defaultPrim = "weft"
    endTimeCode = 1
    framesPerSecond = 24.0
    metersPerUnit = 1
    startTimeCode = 0
    timeCodesPerSecond = 24.0
    upAxis = "Y"
)

def Xform "weft"
{{
    def Mesh "seed"
    {{
        uniform bool doubleSided = true
        int[] faceVertexCounts = [3]
        int[] faceVertexIndices = [0, 1, 2]
        normal3f[] normals (
            interpolation = "vertex"
        )
        texCoord2f[] primvars:st = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)] (
            interpolation = "faceVarying"
        )
        int[] primvars:st:indices = [0, 1, 2]
        uniform token subdivisionScheme = "none"
        point3f[] points.timeSamples = {{
            0: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)],
            1: [(0.0, 0.0, 0.0), (1.0, 0.0, -0.25), (0.1, 0.9, 1e-7)],
        }}
        normal3f[] normals.timeSamples = {{
            0: [(0.0, 0.0, 1.0), (0.0, 0.0, 1.0), (0.0, 0.0, 1.0)],
            1: [{n1}, {n1}, {n1}],
        }}
        float3[] extent.timeSamples = {{
            0: [(0.0, 0.0, 0.0), (1.0, 1.0, 0.0)],
            1: [(0.0, 0.0, -0.25), (1.0, 0.9, 1e-7)],
        }}
    }}
}}
"#
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn faces_are_written_as_given() {
        // A quad and a triangle, without UVs (a fourth point: the quad needs it).
        let dir = tempfile::tempdir().unwrap();
        let polygons = Polygons::new(vec![4, 3], vec![0, 1, 2, 3, 1, 4, 2], Vec::new()).unwrap();
        let spec = CacheSpec {
            dir: dir.path(),
            name: "q",
            polygons: &polygons,
            point_count: 5,
            fps: 30.0,
            samples: 1,
        };
        let mut w = create_cache(CacheFormat::Usd, &spec).unwrap();
        w.write_sample(&[
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 0.0, -1.0],
            [0.0, 0.0, -1.0],
            [2.0, 0.0, 0.0],
        ])
        .unwrap();
        let text = std::fs::read_to_string(&w.finish().unwrap()[0]).unwrap();
        assert!(text.contains("int[] faceVertexCounts = [4, 3]\n"), "{text}");
        assert!(text.contains("int[] faceVertexIndices = [0, 1, 2, 3, 1, 4, 2]\n"), "{text}");
        assert!(
            text.contains(
                "0: [(0.0, 1.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0)],"
            ),
            "{text}"
        );
        assert!(!text.contains("primvars"), "{text}");
    }

    #[test]
    fn points_without_faces_and_prim_names() {
        let text = bake("2-flag.v1", &Polygons::EMPTY);
        assert!(text.contains("    def Points \"_2_flag_v1\"\n"));
        assert!(
            text.contains("float[] widths = [0.01] (\n            interpolation = \"constant\"\n        )\n")
        );
        assert!(text.contains("point3f[] points.timeSamples = {\n            0: ["));
        assert!(!text.contains("faceVertex") && !text.contains("normals"));
        let no_uvs = bake("seed", &Polygons::from_triangles(&[[0, 1, 2]], &[]).unwrap());
        assert!(no_uvs.contains(
            "int[] faceVertexIndices = [0, 1, 2]\n        normal3f[] normals (\n            interpolation = \"vertex\"\n        )\n        uniform token subdivisionScheme"
        ));
        assert!(!no_uvs.contains("primvars"));
    }

    #[test]
    fn floats_round_trip() {
        for v in [0.1f32, 1.0 / 3.0, -1e-38, 3.4028235e38, f32::MIN_POSITIVE, 7e-45] {
            let mut s = String::new();
            tuple(&mut s, [v, v, v]);
            let first = s[1..].split(',').next().unwrap();
            assert_eq!(first.parse::<f32>().unwrap(), v, "{s}");
        }
    }
}
