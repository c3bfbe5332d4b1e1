//! PC2 point caches: [`Pc2Writer`] and a reader hardened against truncated and hostile files.
//!
//! # Layout (little-endian)
//!
//! | offset | type | value |
//! |--------|------|-------|
//! | 0 | 12 bytes | magic `"POINTCACHE2\0"` |
//! | 12 | `i32` | version, `1` |
//! | 16 | `i32` | point count |
//! | 20 | `f32` | start frame (weft writes `0.0`) |
//! | 24 | `f32` | sample rate in frames per sample (weft writes `1.0`: one sample per frame, as Blender's exporter does) |
//! | 28 | `i32` | sample count |
//! | 32 | `f32 × 3 × points × samples` | x y z (m) of each point, sample after sample |
//!
//! Blender's Mesh Cache modifier reads it (format "PC2"); the mesh must have the cache's point
//! count, in the same order.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use crate::bounded::{Accept, BoundedFile, ReadError, ReadProblem};
use crate::cache::{CacheMark, CacheSpec, CacheWriter, SampleCheck, check_prefix, invalid};
use crate::staged::{self, Staged, Writeback, with_path, write_all};

/// The 12-byte magic at the start of a PC2 file.
pub const MAGIC: [u8; 12] = *b"POINTCACHE2\0";

/// The only PC2 version there is.
pub const VERSION: i32 = 1;

/// Bytes before the first sample.
pub const HEADER_LEN: usize = 32;

/// The 32-byte header of a PC2 file.
///
/// ```
/// let header = weft_io::pc2::header(2, 0.0, 1.0, 3);
/// assert_eq!(&header[..12], b"POINTCACHE2\0");
/// assert_eq!(header[16..20], 2i32.to_le_bytes());
/// ```
pub fn header(points: i32, start_frame: f32, sample_rate: f32, samples: i32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..12].copy_from_slice(&MAGIC);
    h[12..16].copy_from_slice(&VERSION.to_le_bytes());
    h[16..20].copy_from_slice(&points.to_le_bytes());
    h[20..24].copy_from_slice(&start_frame.to_le_bytes());
    h[24..28].copy_from_slice(&sample_rate.to_le_bytes());
    h[28..32].copy_from_slice(&samples.to_le_bytes());
    h
}

/// Streams a PC2 cache to `NAME.pc2.partial`, renamed to `NAME.pc2` by [`CacheWriter::finish`].
#[derive(Debug)]
pub struct Pc2Writer {
    // Declared before `staged`: the file is closed before a drop removes it.
    out: BufWriter<File>,
    staged: Staged,
    path: PathBuf,
    check: SampleCheck,
    writeback: Writeback,
    buffer: Vec<u8>,
}

impl Pc2Writer {
    /// Creates the temporary file and writes the header (start frame 0, one sample per frame).
    /// Fails if the spec is invalid or its counts do not fit the format's `i32`s.
    pub fn create(spec: &CacheSpec<'_>) -> io::Result<Self> {
        spec.validate()?;
        let head = spec_header(spec)?;
        let path = spec.path(".pc2");
        let mut staged = Staged::default();
        let mut out = staged.create(path.clone())?;
        write_all(&mut out, &head, &path)?;
        Ok(Pc2Writer {
            out,
            staged,
            path,
            check: SampleCheck::new(spec),
            writeback: Writeback::default(),
            buffer: Vec::with_capacity(spec.point_count * 12),
        })
    }
}

/// The header of `spec`'s cache; fails if its counts do not fit the format's `i32`s.
fn spec_header(spec: &CacheSpec<'_>) -> io::Result<[u8; HEADER_LEN]> {
    let points = i32::try_from(spec.point_count)
        .map_err(|_| invalid(format!("cache '{}': too many points for PC2", spec.name)))?;
    let samples = i32::try_from(spec.samples)
        .map_err(|_| invalid(format!("cache '{}': too many samples for PC2", spec.name)))?;
    Ok(header(points, 0.0, 1.0, samples))
}

impl Pc2Writer {
    /// Reopens the temporary file an earlier run left at `mark` (see
    /// [`crate::cache::resume_cache`]): its header must be this spec's and its length at least
    /// the header and `mark.samples` samples, to which it is cut back.
    pub(crate) fn resume(spec: &CacheSpec<'_>, mark: &CacheMark) -> io::Result<Self> {
        let head = spec_header(spec)?;
        let path = spec.path(".pc2");
        let len = HEADER_LEN as u64 + mark.samples as u64 * spec.point_count as u64 * 12;
        if mark.bytes != len {
            return Err(invalid(format!(
                "cache '{}': the checkpoint records {} bytes for {} samples of {} points; PC2 needs {len}",
                spec.name, mark.bytes, mark.samples, spec.point_count
            )));
        }
        check_prefix(&path, &head)?;
        let mut staged = Staged::default();
        let out = staged.reopen(path.clone(), len)?;
        Ok(Pc2Writer {
            out,
            staged,
            path,
            check: SampleCheck::resumed(spec, mark.samples),
            writeback: Writeback::default(),
            buffer: Vec::with_capacity(spec.point_count * 12),
        })
    }
}

impl CacheWriter for Pc2Writer {
    fn mark(&mut self) -> io::Result<CacheMark> {
        let bytes = staged::sync(&mut self.out, &self.path)?;
        Ok(CacheMark { samples: self.check.written(), bytes, state: Vec::new() })
    }

    fn write_sample(&mut self, positions: &[[f32; 3]]) -> io::Result<()> {
        self.check.next(positions)?;
        self.buffer.clear();
        self.buffer.resize(positions.len() * 12, 0);
        for (bytes, c) in self.buffer.chunks_exact_mut(4).zip(positions.iter().flatten()) {
            bytes.copy_from_slice(&c.to_le_bytes());
        }
        write_all(&mut self.out, &self.buffer, &self.path)?;
        self.writeback.wrote(self.out.get_ref(), self.buffer.len());
        self.check.done();
        Ok(())
    }

    fn suspend(mut self: Box<Self>) {
        self.staged.keep();
    }

    fn finish(self: Box<Self>) -> io::Result<Vec<PathBuf>> {
        let Pc2Writer { out, staged, check, path, .. } = *self;
        check.complete()?;
        staged::close(out).map_err(|e| with_path(e, &path))?;
        staged.commit()
    }
}

/// A PC2 cache read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Pc2 {
    /// Start frame.
    pub start_frame: f32,
    /// Frames per sample.
    pub sample_rate: f32,
    /// Points per sample.
    pub point_count: usize,
    /// Number of samples.
    pub sample_count: usize,
    /// Every position (m), sample after sample: `point_count × sample_count` of them.
    pub positions: Vec<[f32; 3]>,
}

impl Pc2 {
    /// The positions of sample `k`.
    ///
    /// # Panics
    /// If `k >= sample_count`.
    pub fn sample(&self, k: usize) -> &[[f32; 3]] {
        &self.positions[k * self.point_count..(k + 1) * self.point_count]
    }
}

/// Why bytes are not a PC2 cache.
#[derive(Debug, thiserror::Error)]
pub enum Pc2Error {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// Fewer bytes than a header.
    #[error("{len} bytes is shorter than the {HEADER_LEN}-byte PC2 header")]
    Truncated {
        /// The length in bytes.
        len: u64,
    },
    /// The first 12 bytes are not `"POINTCACHE2\0"`.
    #[error("not a PC2 file: the first 12 bytes are {found:?}, not \"POINTCACHE2\\0\"")]
    BadMagic {
        /// The bytes found.
        found: [u8; 12],
    },
    /// A version other than 1.
    #[error("PC2 version {0} is not supported (only version 1)")]
    BadVersion(i32),
    /// A negative point or sample count.
    #[error("the header's {what} is {value}, which is negative")]
    NegativeCount {
        /// `"point count"` or `"sample count"`.
        what: &'static str,
        /// The value.
        value: i32,
    },
    /// The length does not match the header's counts.
    #[error(
        "the header declares {points} points × {samples} samples = {expected} bytes, but the file has {actual}"
    )]
    LengthMismatch {
        /// Declared points.
        points: i32,
        /// Declared samples.
        samples: i32,
        /// The length the header implies, in bytes.
        expected: u64,
        /// The actual length, in bytes.
        actual: u64,
    },
}

/// The header's counts, checked against the total length before anything is allocated.
struct Header {
    start_frame: f32,
    sample_rate: f32,
    points: usize,
    samples: usize,
}

fn le_i32(b: &[u8]) -> i32 {
    i32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn le_f32(b: &[u8]) -> f32 {
    f32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Checks a header against the file's total length (in bytes).
fn parse_header(h: &[u8], total_len: u64) -> Result<Header, Pc2Error> {
    if h.len() < HEADER_LEN || total_len < HEADER_LEN as u64 {
        return Err(Pc2Error::Truncated { len: total_len.min(h.len() as u64) });
    }
    let mut found = [0u8; 12];
    found.copy_from_slice(&h[..12]);
    if found != MAGIC {
        return Err(Pc2Error::BadMagic { found });
    }
    let version = le_i32(&h[12..16]);
    if version != VERSION {
        return Err(Pc2Error::BadVersion(version));
    }
    let points = le_i32(&h[16..20]);
    let samples = le_i32(&h[28..32]);
    for (what, value) in [("point count", points), ("sample count", samples)] {
        if value < 0 {
            return Err(Pc2Error::NegativeCount { what, value });
        }
    }
    // At most 2³¹ · 2³¹ · 12 < 2⁶⁶: computed in u128, no overflow.
    let expected = HEADER_LEN as u128 + points as u128 * samples as u128 * 12;
    if expected != total_len as u128 {
        return Err(Pc2Error::LengthMismatch {
            points,
            samples,
            expected: u64::try_from(expected).unwrap_or(u64::MAX),
            actual: total_len,
        });
    }
    Ok(Header {
        start_frame: le_f32(&h[20..24]),
        sample_rate: le_f32(&h[24..28]),
        points: points as usize,
        samples: samples as usize,
    })
}

fn decode(header: Header, data: &[u8]) -> Pc2 {
    let positions =
        data.chunks_exact(12).map(|p| [le_f32(&p[0..4]), le_f32(&p[4..8]), le_f32(&p[8..12])]).collect();
    Pc2 {
        start_frame: header.start_frame,
        sample_rate: header.sample_rate,
        point_count: header.points,
        sample_count: header.samples,
        positions,
    }
}

/// Parses a whole PC2 file held in memory. Allocates only after the header's counts matched the
/// length of `bytes`.
pub fn parse_pc2(bytes: &[u8]) -> Result<Pc2, Pc2Error> {
    let header = parse_header(bytes, bytes.len() as u64)?;
    Ok(decode(header, &bytes[HEADER_LEN..]))
}

/// Reads a PC2 file (see [`crate::bounded`]). The header's counts are checked against the
/// file's length before the samples are read or anything of their size is allocated, and no more
/// samples are read than the header declares.
pub fn read_pc2(path: &Path) -> Result<Pc2, Pc2Error> {
    let read_err = |e: ReadError| match e.problem {
        ReadProblem::Io(source) => Pc2Error::Read { path: e.path, source },
        problem => Pc2Error::Read { path: e.path, source: io::Error::other(problem.to_string()) },
    };
    let mut file = BoundedFile::open(path, Accept::AnyFile).map_err(read_err)?;
    let len = file.opened_len();
    let head = file.read_head(HEADER_LEN).map_err(read_err)?;
    let header = parse_header(&head, len)?;
    let data_len = len - HEADER_LEN as u64;
    let data = file.read_rest(data_len).map_err(|e| match e.problem {
        // The file grew while being read.
        ReadProblem::TooLarge { len: found, .. } => Pc2Error::LengthMismatch {
            points: header.points as i32,
            samples: header.samples as i32,
            expected: len,
            actual: HEADER_LEN as u64 + found,
        },
        _ => read_err(e),
    })?;
    if data.len() as u64 != data_len {
        // The file shrank while being read.
        return Err(Pc2Error::Truncated { len: HEADER_LEN as u64 + data.len() as u64 });
    }
    Ok(decode(header, &data))
}

#[cfg(test)]
mod tests {
    use super::*;

    static EMPTY: weft_core::polygons::Polygons = weft_core::polygons::Polygons::EMPTY;

    fn spec(dir: &Path) -> CacheSpec<'_> {
        CacheSpec { dir, name: "seed", polygons: &EMPTY, point_count: 2, fps: 10.0, samples: 2 }
    }

    #[test]
    fn header_bytes_are_exact() {
        let h = header(2, 0.0, 1.0, 3);
        let mut expected = Vec::new();
        expected.extend_from_slice(b"POINTCACHE2\0");
        expected.extend_from_slice(&[1, 0, 0, 0]);
        expected.extend_from_slice(&[2, 0, 0, 0]);
        expected.extend_from_slice(&[0, 0, 0, 0]); // 0.0f32
        expected.extend_from_slice(&[0, 0, 0x80, 0x3f]); // 1.0f32
        expected.extend_from_slice(&[3, 0, 0, 0]);
        assert_eq!(h.as_slice(), expected.as_slice());
    }

    #[test]
    fn round_trip_through_writer_and_reader() {
        let dir = tempfile::tempdir().unwrap();
        let mut w: Box<dyn CacheWriter> = Box::new(Pc2Writer::create(&spec(dir.path())).unwrap());
        let s0 = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
        let s1 = [[0.0, 0.0, 0.0], [1.5, -0.1, 1e-30]];
        w.write_sample(&s0).unwrap();
        w.write_sample(&s1).unwrap();
        let files = w.finish().unwrap();
        assert_eq!(files, vec![dir.path().join("seed.pc2")]);
        let bytes = std::fs::read(&files[0]).unwrap();
        assert_eq!(bytes.len(), 32 + 2 * 2 * 12);
        assert_eq!(bytes[..32], header(2, 0.0, 1.0, 2));
        assert_eq!(bytes[32 + 12..32 + 16], 2.0f32.to_le_bytes());
        let pc2 = read_pc2(&files[0]).unwrap();
        assert_eq!(pc2, parse_pc2(&bytes).unwrap());
        assert_eq!((pc2.point_count, pc2.sample_count), (2, 2));
        assert_eq!((pc2.start_frame, pc2.sample_rate), (0.0, 1.0));
        assert_eq!(pc2.sample(0), &s0);
        assert_eq!(pc2.sample(1), &s1);
    }

    #[test]
    fn dropped_writer_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Pc2Writer::create(&spec(dir.path())).unwrap();
        w.write_sample(&[[0.0; 3]; 2]).unwrap();
        assert!(dir.path().join("seed.pc2.partial").exists());
        assert!(!dir.path().join("seed.pc2").exists());
        drop(w);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn hostile_and_truncated_input_is_refused() {
        let good = {
            let mut b = header(1, 0.0, 1.0, 1).to_vec();
            b.extend_from_slice(&[0u8; 12]);
            b
        };
        assert!(parse_pc2(&good).is_ok());
        assert!(matches!(parse_pc2(&[]), Err(Pc2Error::Truncated { len: 0 })));
        assert!(matches!(parse_pc2(&good[..31]), Err(Pc2Error::Truncated { len: 31 })));
        assert!(matches!(
            parse_pc2(&good[..40]),
            Err(Pc2Error::LengthMismatch { expected: 44, actual: 40, .. })
        ));
        let mut b = good.clone();
        b[0] = b'X';
        assert!(matches!(parse_pc2(&b), Err(Pc2Error::BadMagic { .. })));
        let mut b = good.clone();
        b[12] = 2;
        assert!(matches!(parse_pc2(&b), Err(Pc2Error::BadVersion(2))));
        // A header claiming 2³¹−1 points × 2³¹−1 samples: refused without allocating.
        let b = header(i32::MAX, 0.0, 1.0, i32::MAX);
        assert!(matches!(parse_pc2(&b), Err(Pc2Error::LengthMismatch { .. })));
        let b = header(-1, 0.0, 1.0, 1);
        assert!(matches!(parse_pc2(&b), Err(Pc2Error::NegativeCount { value: -1, .. })));
        // Zero points or samples is a valid, empty cache.
        let empty = parse_pc2(&header(0, 0.0, 1.0, 5)).unwrap();
        assert!(empty.positions.is_empty());
    }

    #[test]
    fn mutated_files_never_panic() {
        let mut valid = header(3, 0.0, 1.0, 2).to_vec();
        valid.extend((0..3 * 2 * 12).map(|i| i as u8));
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..5000 {
            let mut b = valid.clone();
            let len = (next() % (b.len() as u64 + 8)) as usize;
            b.resize(len, 0);
            for _ in 0..next() % 4 {
                if !b.is_empty() {
                    let i = (next() % b.len() as u64) as usize;
                    b[i] = next() as u8;
                }
            }
            if let Ok(pc2) = parse_pc2(&b) {
                assert_eq!(pc2.positions.len(), pc2.point_count * pc2.sample_count);
                assert_eq!(HEADER_LEN + pc2.positions.len() * 12, b.len());
            }
        }
    }

    #[test]
    fn reader_checks_length_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.pc2");
        let f = File::create(&path).unwrap();
        std::io::Write::write_all(&mut &f, &header(1000, 0.0, 1.0, 1000)).unwrap();
        assert!(matches!(read_pc2(&path), Err(Pc2Error::LengthMismatch { actual: 32, .. })));
        assert!(matches!(read_pc2(&dir.path().join("missing.pc2")), Err(Pc2Error::Read { .. })));
    }
}
