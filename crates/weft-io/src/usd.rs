//! ASCII USD caches (`NAME.usda`): a mesh with time-sampled points.
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
//!         texCoord2f[] primvars:st = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)] (
//!             interpolation = "faceVarying"
//!         )
//!         int[] primvars:st:indices = [0, 1, 2]
//!         uniform token subdivisionScheme = "none"
//!         point3f[] points.timeSamples = {
//!             0: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)],
//!             1: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.9, 0.0)],
//!         }
//!         float3[] extent.timeSamples = {
//!             0: [(0.0, 0.0, 0.0), (1.0, 1.0, 0.0)],
//!             1: [(0.0, 0.0, 0.0), (1.0, 0.9, 0.0)],
//!         }
//!     }
//! }
//! ```
//!
//! A cloth with UVs gets them as the primvar `st`, face-varying (one value per corner of each face,
//! so a UV seam is kept without splitting a point) and indexed: `primvars:st` holds the distinct
//! UVs in order of first use and `primvars:st:indices` the one for each entry of
//! `faceVertexIndices`. A cloth without UVs has no `st`.
//!
//! A cloth without triangles becomes a `Points` prim with the same `points.timeSamples` and
//! `extent.timeSamples` and one constant width, [`POINT_WIDTH`]. The prim is named after the
//! cloth, with every character USD does not allow in a prim name replaced by `_` (and a leading
//! `_` if the name starts with a digit). Numbers are written with Rust's shortest round-trip
//! formatting in its `Debug` form (`1.0`, `0.1`, `1e-7`, `3.4028235e38`), so the `f32` positions
//! read back exactly. (The `Display` form spells `3.4e38` as a 39-digit integer, which USD's text
//! parser first tries to read as a 64-bit integer and warns about.)
//!
//! The file is streamed: the header and topology when the writer is created, one time sample per
//! [`CacheWriter::write_sample`], and the extents and closing lines in [`CacheWriter::finish`]
//! (extents are kept in memory meanwhile: 24 bytes per sample).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;

use crate::cache::{CacheMark, CacheSpec, CacheWriter, SampleCheck, check_prefix, invalid};
use crate::staged::{self, Staged, with_path, write_all};

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
    line: String,
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
        Ok(UsdWriter {
            out,
            staged,
            path,
            check: SampleCheck::new(spec),
            extents: Vec::with_capacity(spec.samples.min(1 << 20) as usize),
            line: String::new(),
        })
    }

    /// Reopens the temporary file an earlier run left at `mark` (see
    /// [`crate::cache::resume_cache`]): it must start with this spec's header and topology, and
    /// `mark.state` must hold the extents of its `mark.samples` samples.
    pub(crate) fn resume(spec: &CacheSpec<'_>, mark: &CacheMark) -> io::Result<Self> {
        let path = spec.path(".usda");
        if mark.state.len() as u64 != mark.samples as u64 * 24 {
            return Err(invalid(format!(
                "cache '{}': the checkpoint holds {} bytes of extents for {} samples; 24 each",
                spec.name,
                mark.state.len(),
                mark.samples
            )));
        }
        let extents: Vec<[[f32; 3]; 2]> = mark
            .state
            .chunks_exact(24)
            .map(|c| {
                let f = |i: usize| f32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]]);
                [[f(0), f(1), f(2)], [f(3), f(4), f(5)]]
            })
            .collect();
        check_prefix(&path, head(spec).as_bytes())?;
        let mut staged = Staged::default();
        let out = staged.reopen(path.clone(), mark.bytes)?;
        Ok(UsdWriter {
            out,
            staged,
            path,
            check: SampleCheck::resumed(spec, mark.samples),
            extents,
            line: String::new(),
        })
    }
}

/// The layer header, the prims and their topology, up to the opening of `points.timeSamples`.
fn head(spec: &CacheSpec<'_>) -> String {
    {
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
        if spec.triangles.is_empty() {
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
            for i in 0..spec.triangles.len() {
                head.push_str(if i == 0 { "3" } else { ", 3" });
            }
            head.push_str("]\n        int[] faceVertexIndices = [");
            for (i, p) in spec.triangles.iter().flatten().enumerate() {
                let _ = write!(head, "{}{p}", if i == 0 { "" } else { ", " });
            }
            head.push_str("]\n");
            if !spec.uvs.is_empty() {
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
}

impl CacheWriter for UsdWriter {
    fn mark(&mut self) -> io::Result<CacheMark> {
        let bytes = staged::sync(&mut self.out, &self.path)?;
        let state = self.extents.iter().flatten().flatten().flat_map(|c| c.to_le_bytes()).collect();
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
        self.extents.push([lo, hi]);
        self.check.done();
        Ok(())
    }

    fn finish(self: Box<Self>) -> io::Result<Vec<PathBuf>> {
        let UsdWriter { mut out, staged, path, check, extents, .. } = *self;
        check.complete()?;
        let mut tail = String::from("        }\n        float3[] extent.timeSamples = {\n");
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

    fn bake(name: &str, triangles: &[[u32; 3]], uvs: &[[[f32; 2]; 3]]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let spec = CacheSpec { dir: dir.path(), name, triangles, uvs, point_count: 3, fps: 24.0, samples: 2 };
        let mut w = create_cache(CacheFormat::Usd, &spec).unwrap();
        w.write_sample(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]).unwrap();
        w.write_sample(&[[0.0, 0.0, 0.0], [1.0, 0.0, -0.25], [0.1, 0.9, 1e-7]]).unwrap();
        let files = w.finish().unwrap();
        assert_eq!(files, vec![dir.path().join(format!("{name}.usda"))]);
        std::fs::read_to_string(&files[0]).unwrap()
    }

    #[test]
    fn mesh_layer_is_exact() {
        let text = bake("seed", &[[0, 1, 2]], &[[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]]);
        let expected = r#"#usda 1.0
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
{
    def Mesh "seed"
    {
        uniform bool doubleSided = true
        int[] faceVertexCounts = [3]
        int[] faceVertexIndices = [0, 1, 2]
        texCoord2f[] primvars:st = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)] (
            interpolation = "faceVarying"
        )
        int[] primvars:st:indices = [0, 1, 2]
        uniform token subdivisionScheme = "none"
        point3f[] points.timeSamples = {
            0: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)],
            1: [(0.0, 0.0, 0.0), (1.0, 0.0, -0.25), (0.1, 0.9, 1e-7)],
        }
        float3[] extent.timeSamples = {
            0: [(0.0, 0.0, 0.0), (1.0, 1.0, 0.0)],
            1: [(0.0, 0.0, -0.25), (1.0, 0.9, 1e-7)],
        }
    }
}
"#;
        assert_eq!(text, expected);
    }

    #[test]
    fn points_without_triangles_and_prim_names() {
        let text = bake("2-flag.v1", &[], &[]);
        assert!(text.contains("    def Points \"_2_flag_v1\"\n"));
        assert!(
            text.contains("float[] widths = [0.01] (\n            interpolation = \"constant\"\n        )\n")
        );
        assert!(text.contains("point3f[] points.timeSamples = {\n            0: ["));
        assert!(!text.contains("faceVertex"));
        let no_uvs = bake("seed", &[[0, 1, 2]], &[]);
        assert!(
            no_uvs.contains("int[] faceVertexIndices = [0, 1, 2]\n        uniform token subdivisionScheme")
        );
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
