//! Animation caches: the [`CacheWriter`] trait, the [`CacheFormat`]s and [`create_cache`].
//!
//! A cache of one cloth holds `samples` snapshots of its particle positions (m), sample `k` at frame
//! `k` (time `k/fps` s); a bake of `frames` frames writes `frames + 1` samples, sample 0 being the
//! initial state.
//!
//! ```
//! use weft_io::cache::{CacheFormat, CacheSpec, create_cache};
//! let dir = tempfile::tempdir().unwrap();
//! let spec = CacheSpec {
//!     dir: dir.path(),
//!     name: "seed",
//!     polygons: &Default::default(),
//!     point_count: 2,
//!     fps: 10.0,
//!     samples: 2,
//! };
//! let mut cache = create_cache(CacheFormat::Pc2, &spec).unwrap();
//! cache.write_sample(&[[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]).unwrap();
//! cache.write_sample(&[[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]]).unwrap();
//! let files = cache.finish().unwrap();
//! assert_eq!(files, vec![dir.path().join("seed.pc2")]);
//! let pc2 = weft_io::read_pc2(&files[0]).unwrap();
//! assert_eq!(pc2.sample(1)[1], [1.5, 0.0, 0.0]);
//! ```
//!
//! Every writer writes under temporary names (`NAME.pc2.partial`) and renames its files into place
//! in [`CacheWriter::finish`], after checking that every declared sample was written. A writer
//! dropped without `finish` removes its temporary files. An existing cache of the same name is
//! replaced only by a complete one.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use weft_core::polygons::Polygons;

use crate::obj_sequence::ObjSequenceWriter;
use crate::pc2::Pc2Writer;
use crate::usd::UsdWriter;

/// Writes one cloth's samples, in order, then publishes the files. Writers are `Send`, so a bake
/// may write its caches from another thread.
pub trait CacheWriter: Send {
    /// Appends the next sample: one position (m) per point, exactly
    /// [`CacheSpec::point_count`] of them, all finite. Fails (writing nothing) on a wrong count, a
    /// non-finite position, or a sample beyond [`CacheSpec::samples`].
    fn write_sample(&mut self, positions: &[[f32; 3]]) -> io::Result<()>;

    /// Flushes and syncs what is written so far and says where the writer stands, for a
    /// checkpoint: [`resume_cache`] reopens the temporary files at this mark after a crash.
    fn mark(&mut self) -> io::Result<CacheMark>;

    /// Stops writing and leaves the temporary files as they stand, for [`resume_cache`] to reopen
    /// at the last [`CacheWriter::mark`] (a bake stopped after a checkpoint); what was written
    /// after that mark is cut away then. Nothing is renamed, and nothing removed.
    fn suspend(self: Box<Self>);

    /// Checks that every declared sample was written, flushes and syncs the files, and renames them
    /// to their final names, which it returns (one file, or one per sample for an OBJ sequence).
    /// On any error the temporary files are removed and no final file is left.
    fn finish(self: Box<Self>) -> io::Result<Vec<PathBuf>>;
}

/// A cache file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheFormat {
    /// `NAME.pc2`: PC2 point cache (Blender's Mesh Cache modifier, Maya, Houdini, 3ds Max).
    Pc2,
    /// `NAME.usda`: ASCII USD, a mesh (or points) with time-sampled positions and normals.
    Usd,
    /// `NAME.0000.obj`, `NAME.0001.obj`, ...: one Wavefront OBJ per sample.
    ObjSequence,
}

impl CacheFormat {
    /// Every format, in the order of their names.
    pub const ALL: [CacheFormat; 3] = [CacheFormat::Pc2, CacheFormat::Usd, CacheFormat::ObjSequence];

    /// The name used on the command line: `"pc2"`, `"usd"`, `"obj"`.
    pub fn name(self) -> &'static str {
        match self {
            CacheFormat::Pc2 => "pc2",
            CacheFormat::Usd => "usd",
            CacheFormat::ObjSequence => "obj",
        }
    }
}

impl fmt::Display for CacheFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A cache format name that is not one of `pc2`, `usd`, `obj`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cache format '{0}': use pc2, usd or obj")]
pub struct UnknownFormat(pub String);

impl FromStr for CacheFormat {
    type Err = UnknownFormat;

    /// Parses `"pc2"`, `"usd"` or `"obj"` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CacheFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// What a cache holds: where it goes, what it is named, its mesh and its sample layout.
#[derive(Debug, Clone, Copy)]
pub struct CacheSpec<'a> {
    /// Directory the files are written to (must exist).
    pub dir: &'a Path,
    /// The cloth's name, the stem of every file: letters, digits, `-`, `_`, `.`, not starting
    /// with `.` (the rule of `weft-core` for cloth names).
    pub name: &'a str,
    /// The mesh's faces as indices into the points, with their per-corner UVs if any (USD and OBJ
    /// write them as given, with a normal per point computed from each sample; PC2 has neither).
    /// The points need not be a model's particles: any mesh of `point_count` points. May be
    /// empty: USD then writes a `Points` prim and OBJ only vertices.
    pub polygons: &'a Polygons,
    /// Points per sample (`≥ 1`).
    pub point_count: usize,
    /// Samples per second, in 1/s (`> 0`): the bake's frames per second.
    pub fps: f64,
    /// Samples the cache will hold (`≥ 1`): `frames + 1` for a bake.
    pub samples: u32,
}

impl CacheSpec<'_> {
    /// Checks the spec: a file-safe name, at least one point and one sample, a finite positive
    /// `fps`, face indices below `point_count` (the rest of the faces' rules hold by
    /// construction of [`Polygons`]).
    pub fn validate(&self) -> io::Result<()> {
        let name_ok = !self.name.is_empty()
            && !self.name.starts_with('.')
            && self.name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !name_ok {
            return Err(invalid(format!(
                "'{}' cannot name a cache file: use letters, digits, '-', '_' or '.', not starting with '.'",
                self.name.escape_debug()
            )));
        }
        if self.point_count == 0 {
            return Err(invalid(format!("cache '{}': no points", self.name)));
        }
        if self.samples == 0 {
            return Err(invalid(format!("cache '{}': no samples", self.name)));
        }
        if !(self.fps.is_finite() && self.fps > 0.0) {
            return Err(invalid(format!(
                "cache '{}': {} frames per second must be finite and greater than zero",
                self.name, self.fps
            )));
        }
        if self.polygons.points_needed() > self.point_count {
            return Err(invalid(format!(
                "cache '{}': the faces refer to point {}, past the {} points",
                self.name,
                self.polygons.points_needed() - 1,
                self.point_count
            )));
        }
        Ok(())
    }

    /// The distinct UVs in order of first use, and the index of each face corner's UV into them
    /// (in the order of [`Polygons::corners`]). Deterministic: depends only on the UVs.
    pub(crate) fn indexed_uvs(&self) -> (Vec<[f32; 2]>, Vec<u32>) {
        let mut index = std::collections::HashMap::new();
        let mut values = Vec::new();
        let corners = self
            .polygons
            .uvs()
            .iter()
            .map(|&uv| {
                *index.entry(uv.map(f32::to_bits)).or_insert_with(|| {
                    values.push(uv);
                    values.len() as u32 - 1
                })
            })
            .collect();
        (values, corners)
    }

    /// The final path of a file named `NAME` + `suffix` in the directory.
    pub(crate) fn path(&self, suffix: &str) -> PathBuf {
        self.dir.join(format!("{}{suffix}", self.name))
    }
}

/// Opens a writer for `format` (see [`CacheSpec::validate`] for what is checked first).
pub fn create_cache(format: CacheFormat, spec: &CacheSpec<'_>) -> io::Result<Box<dyn CacheWriter>> {
    Ok(match format {
        CacheFormat::Pc2 => Box::new(Pc2Writer::create(spec)?),
        CacheFormat::Usd => Box::new(UsdWriter::create(spec)?),
        CacheFormat::ObjSequence => Box::new(ObjSequenceWriter::create(spec)?),
    })
}

/// Where a cache writer stands: what a checkpoint records to reopen it (see [`CacheWriter::mark`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CacheMark {
    /// Samples written.
    pub samples: u32,
    /// Length of the temporary file in bytes (PC2, USD; 0 for an OBJ sequence, one file per sample).
    pub bytes: u64,
    /// What else the writer keeps (USD: for a mesh, the length of its normals' scratch file, 8
    /// bytes, then the extent of each sample so far, 24 bytes each; empty for the others).
    pub state: Vec<u8>,
}

/// Reopens the temporary files of a writer for `format` that an earlier run of the same bake left
/// at `mark` (cut back to it), to go on with sample `mark.samples`. Fails if the files are missing,
/// shorter than the mark, or do not start as this spec's cache would.
pub fn resume_cache(
    format: CacheFormat,
    spec: &CacheSpec<'_>,
    mark: &CacheMark,
) -> io::Result<Box<dyn CacheWriter>> {
    spec.validate()?;
    if mark.samples > spec.samples {
        return Err(invalid(format!(
            "cache '{}': the checkpoint has {} samples, more than the {} declared",
            spec.name, mark.samples, spec.samples
        )));
    }
    Ok(match format {
        CacheFormat::Pc2 => Box::new(Pc2Writer::resume(spec, mark)?),
        CacheFormat::Usd => Box::new(UsdWriter::resume(spec, mark)?),
        CacheFormat::ObjSequence => Box::new(ObjSequenceWriter::resume(spec, mark)?),
    })
}

/// Fails unless the temporary file of `path` starts with `expected` (the header this spec writes).
pub(crate) fn check_prefix(path: &Path, expected: &[u8]) -> io::Result<()> {
    use std::io::Read as _;
    let temp = crate::staged::partial_path(path);
    let mut found = Vec::with_capacity(expected.len());
    std::fs::File::open(&temp)
        .and_then(|f| f.take(expected.len() as u64).read_to_end(&mut found))
        .map_err(|e| crate::staged::with_path(e, &temp))?;
    if found != expected {
        return Err(crate::staged::with_path(
            io::Error::new(io::ErrorKind::InvalidData, "does not start as this bake's cache would"),
            &temp,
        ));
    }
    Ok(())
}

/// An `InvalidInput` error.
pub(crate) fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Counts samples against the declared number and checks each one before it is written.
#[derive(Debug, Clone)]
pub(crate) struct SampleCheck {
    name: String,
    point_count: usize,
    samples: u32,
    written: u32,
}

impl SampleCheck {
    pub(crate) fn new(spec: &CacheSpec<'_>) -> Self {
        SampleCheck {
            name: spec.name.to_string(),
            point_count: spec.point_count,
            samples: spec.samples,
            written: 0,
        }
    }

    /// A check that `written` samples have already passed (a resumed writer).
    pub(crate) fn resumed(spec: &CacheSpec<'_>, written: u32) -> Self {
        SampleCheck { written, ..SampleCheck::new(spec) }
    }

    /// Samples written so far.
    pub(crate) fn written(&self) -> u32 {
        self.written
    }

    /// Checks the next sample (count, length, finiteness) and returns its index. The sample only
    /// counts once [`SampleCheck::done`] is called after it was written.
    pub(crate) fn next(&self, positions: &[[f32; 3]]) -> io::Result<u32> {
        if self.written >= self.samples {
            return Err(invalid(format!(
                "cache '{}': sample {} is one more than the {} declared",
                self.name, self.written, self.samples
            )));
        }
        if positions.len() != self.point_count {
            return Err(invalid(format!(
                "cache '{}': sample {} has {} points, the cache has {}",
                self.name,
                self.written,
                positions.len(),
                self.point_count
            )));
        }
        if let Some(i) = positions.iter().position(|p| p.iter().any(|c| !c.is_finite())) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "cache '{}': sample {}: point {i} is {:?}, not finite",
                    self.name, self.written, positions[i]
                ),
            ));
        }
        Ok(self.written)
    }

    /// Marks the checked sample as written.
    pub(crate) fn done(&mut self) {
        self.written += 1;
    }

    /// Fails unless exactly the declared number of samples was written.
    pub(crate) fn complete(&self) -> io::Result<()> {
        if self.written == self.samples {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "cache '{}': {} of {} samples written; the incomplete cache was removed",
                    self.name, self.written, self.samples
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for f in CacheFormat::ALL {
            assert_eq!(f.to_string().parse::<CacheFormat>(), Ok(f));
        }
        assert_eq!("OBJ".parse(), Ok(CacheFormat::ObjSequence));
        assert_eq!(
            "abc".parse::<CacheFormat>().unwrap_err().to_string(),
            "unknown cache format 'abc': use pc2, usd or obj"
        );
    }

    #[test]
    fn spec_rules() {
        let dir = Path::new(".");
        let uvs = vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
        let polygons = Polygons::new(vec![3, 3], vec![0, 1, 2, 2, 1, 0], uvs).unwrap();
        let ok = CacheSpec { dir, name: "a", polygons: &polygons, point_count: 3, fps: 24.0, samples: 1 };
        assert_eq!(ok.indexed_uvs(), (vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], vec![0, 1, 2, 0, 1, 2]));
        assert!(ok.validate().is_ok());
        for bad in [
            CacheSpec { name: "../x", ..ok },
            CacheSpec { name: "", ..ok },
            CacheSpec { name: ".hidden", ..ok },
            CacheSpec { point_count: 2, ..ok },
            CacheSpec { samples: 0, ..ok },
            CacheSpec { fps: 0.0, ..ok },
            CacheSpec { fps: f64::NAN, ..ok },
        ] {
            let e = bad.validate().unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        }
        let e = CacheSpec { point_count: 2, ..ok }.validate().unwrap_err();
        assert_eq!(e.to_string(), "cache 'a': the faces refer to point 2, past the 2 points");
    }

    #[test]
    fn every_format_checks_samples_and_cleans_up() {
        let triangle = Polygons::from_triangles(&[[0, 1, 2]], &[]).unwrap();
        let (a, b) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
        // Points only, and a mesh (whose USD writer keeps its normals in a second file).
        for (format, polygons) in
            CacheFormat::ALL.into_iter().flat_map(|f| [(f, Polygons::default()), (f, triangle.clone())])
        {
            let dir = tempfile::tempdir().unwrap();
            let spec = CacheSpec {
                dir: dir.path(),
                name: "c",
                polygons: &polygons,
                point_count: 3,
                fps: 24.0,
                samples: 2,
            };
            let mut w = create_cache(format, &spec).unwrap();
            assert!(w.write_sample(&[]).is_err(), "{format}: wrong length");
            assert!(w.write_sample(&[[f32::NAN, 0.0, 0.0], a, b]).is_err(), "{format}: NaN");
            w.write_sample(&[[1.0, 2.0, 3.0], a, b]).unwrap();
            // One of two samples: finish refuses and leaves nothing.
            let e = w.finish().unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{format}: {e}");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{format}");

            // Dropped mid-way: nothing left either.
            let mut w = create_cache(format, &spec).unwrap();
            w.write_sample(&[[1.0, 2.0, 3.0], a, b]).unwrap();
            drop(w);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{format}");

            // Complete: files in place, no partial file, a third sample refused.
            let mut w = create_cache(format, &spec).unwrap();
            w.write_sample(&[[1.0, 2.0, 3.0], a, b]).unwrap();
            w.write_sample(&[[1.0, 2.0, 3.5], a, b]).unwrap();
            assert!(w.write_sample(&[[1.0, 2.0, 3.5], a, b]).is_err(), "{format}: extra");
            let files = w.finish().unwrap();
            let mut names: Vec<_> =
                std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
            names.sort();
            assert_eq!(names, files, "{format}");
        }
    }

    #[test]
    fn a_suspended_writer_keeps_its_files_and_resumes_to_the_same_bytes() {
        let triangle = Polygons::from_triangles(&[[0, 1, 2]], &[]).unwrap();
        let samples =
            [[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[0.0, 0.5, 0.0]; 3], [[0.25; 3]; 3]];
        for (format, polygons) in
            CacheFormat::ALL.into_iter().flat_map(|f| [(f, Polygons::default()), (f, triangle.clone())])
        {
            let (whole, parts) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let spec = |dir| CacheSpec {
                dir,
                name: "c",
                polygons: &polygons,
                point_count: 3,
                fps: 24.0,
                samples: 3,
            };
            let mut w = create_cache(format, &spec(whole.path())).unwrap();
            samples.iter().for_each(|s| w.write_sample(s).unwrap());
            w.finish().unwrap();

            let mut w = create_cache(format, &spec(parts.path())).unwrap();
            w.write_sample(&samples[0]).unwrap();
            let mark = w.mark().unwrap();
            // Written after the mark, then cut away when resumed.
            w.write_sample(&samples[2]).unwrap();
            w.suspend();
            assert!(std::fs::read_dir(parts.path()).unwrap().count() > 0, "{format}: the files stay");
            let mut w = resume_cache(format, &spec(parts.path()), &mark).unwrap();
            samples[1..].iter().for_each(|s| w.write_sample(s).unwrap());
            w.finish().unwrap();
            assert_eq!(contents(whole.path()), contents(parts.path()), "{format}");
        }
    }

    /// Every file of `dir` by name, with its bytes.
    fn contents(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
            .collect();
        files.sort();
        files
    }
}
