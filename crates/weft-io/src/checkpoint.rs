//! Checkpoints: what a bake needs to go on after a crash, in one small binary file
//! (`DIR/weft.checkpoint`).
//!
//! A bake writes its caches under temporary names (`NAME.pc2.partial`, see [`crate::cache`]). At
//! a checkpoint it flushes and syncs them, then records here, atomically ([`write_checkpoint`]:
//! through a [`StagedFile`], written to `weft.checkpoint.partial`, synced, renamed): how many
//! frames are done, the simulated time, the whole particle state (positions with inverse masses,
//! previous positions and velocities, as the kernels store them), how many sweeps ago the
//! statistics were last measured fully, where each cache writer stands ([`CacheMark`]), and how
//! long the statistics file is. `λ` is not recorded: XPBD resets it at the start of every time
//! step. A bake resumed from it reopens the temporary files, cuts them back to the recorded
//! lengths, puts the state back, and goes on: the same bytes as a bake that never stopped.
//!
//! A `fingerprint` ties the checkpoint to one bake (the model as built, the settings, the
//! formats, the kernel and the weft build): the caller computes it and refuses a checkpoint whose
//! fingerprint differs.
//!
//! # Format (version 3, little-endian)
//!
//! ```text
//! magic "WEFTCKPT"   version u32 = 3   fingerprint u64   frame u32   time f64   substeps u32
//! stats since u64
//! n u64   positions n × 4 f32   previous positions n × 4 f32   velocities n × 4 f32
//! caches u32   per cache: samples u32, bytes u64, state length u64, state bytes
//! stats bytes u64
//! checksum u64: FNV-1a 64 of every byte before it
//! ```
//!
//! The reader checks every count against the bytes that remain before it allocates, and the
//! checksum, so a file cut short or damaged is a clean [`CheckpointError`], never a panic or a
//! huge allocation.

use std::io;
use std::path::{Path, PathBuf};

use crate::StagedFile;
use crate::bounded::{Accept, ReadProblem, read_bounded};
use crate::cache::CacheMark;
pub use crate::staged::reopen_partial;

/// File name of a bake's checkpoint in its output directory.
pub const CHECKPOINT_FILE: &str = "weft.checkpoint";

/// First bytes of a checkpoint file.
const MAGIC: &[u8; 8] = b"WEFTCKPT";
/// Format version (2: the substep count of the next frame after the time; 3: the sweeps since
/// the last fully measured frame after it).
const VERSION: u32 = 3;
/// Largest checkpoint read, in bytes (a model within the default limits is far below it).
pub const MAX_CHECKPOINT_BYTES: u64 = 16 << 30;

/// The state of a bake after `frame` frames.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Checkpoint {
    /// Identifies the bake (see the module documentation).
    pub fingerprint: u64,
    /// Frames completed (and written to every cache).
    pub frame: u32,
    /// Simulated time in s.
    pub time: f64,
    /// Time steps the next frame starts with (`≥ 1`; in a bake to a strain tolerance, the count
    /// the previous frame chose for it).
    pub substeps: u32,
    /// Constraint sweeps (time steps × iterations) stepped since the last frame whose statistics
    /// were measured fully: when the next one is due.
    pub stats_since: u64,
    /// `[x, y, z, w]`: positions in m and inverse masses in 1/kg.
    pub positions: Vec<[f32; 4]>,
    /// `[x, y, z, 0]`: positions at the start of the last time step, in m.
    pub prev_positions: Vec<[f32; 4]>,
    /// `[x, y, z, 0]`: velocities in m/s.
    pub velocities: Vec<[f32; 4]>,
    /// Where each cache writer stands, in the bake's order of caches.
    pub caches: Vec<CacheMark>,
    /// Length of the statistics file's temporary file, in bytes.
    pub stats_bytes: u64,
}

/// Why a checkpoint cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The bytes are not a checkpoint of this version, or are cut short or damaged.
    #[error("not a usable weft checkpoint: {0}")]
    Format(String),
}

/// FNV-1a, 64 bits: a small, fixed hash (the same on every machine and every run).
#[derive(Debug, Clone, Copy)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Mixes in `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// What a checkpoint records, borrowed from where it lies: a bake writes its checkpoint straight
/// from its model and its writers, without copying the particle state ([`write_checkpoint`]).
/// The fields are [`Checkpoint`]'s.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointView<'a> {
    /// [`Checkpoint::fingerprint`].
    pub fingerprint: u64,
    /// [`Checkpoint::frame`].
    pub frame: u32,
    /// [`Checkpoint::time`], s.
    pub time: f64,
    /// [`Checkpoint::substeps`].
    pub substeps: u32,
    /// [`Checkpoint::stats_since`].
    pub stats_since: u64,
    /// [`Checkpoint::positions`]: m, and 1/kg.
    pub positions: &'a [[f32; 4]],
    /// [`Checkpoint::prev_positions`], m.
    pub prev_positions: &'a [[f32; 4]],
    /// [`Checkpoint::velocities`], m/s.
    pub velocities: &'a [[f32; 4]],
    /// [`Checkpoint::caches`].
    pub caches: &'a [CacheMark],
    /// [`Checkpoint::stats_bytes`], bytes.
    pub stats_bytes: u64,
}

impl Checkpoint {
    /// The checkpoint as a view, to encode.
    pub fn view(&self) -> CheckpointView<'_> {
        CheckpointView {
            fingerprint: self.fingerprint,
            frame: self.frame,
            time: self.time,
            substeps: self.substeps,
            stats_since: self.stats_since,
            positions: &self.positions,
            prev_positions: &self.prev_positions,
            velocities: &self.velocities,
            caches: &self.caches,
            stats_bytes: self.stats_bytes,
        }
    }
}

/// Particle records encoded at a time, so that the state is written in pieces of 48 KiB, never
/// copied whole.
const RECORDS_PER_PIECE: usize = 3 << 10;

/// Feeds the bytes of `c` in the format above to `put`, in order, piece by piece; the checksum
/// is the caller's.
fn encode_pieces(c: &CheckpointView<'_>, put: &mut impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
    let n = c.positions.len();
    let mut b = Vec::with_capacity(64);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&c.fingerprint.to_le_bytes());
    b.extend_from_slice(&c.frame.to_le_bytes());
    b.extend_from_slice(&c.time.to_le_bytes());
    b.extend_from_slice(&c.substeps.to_le_bytes());
    b.extend_from_slice(&c.stats_since.to_le_bytes());
    b.extend_from_slice(&(n as u64).to_le_bytes());
    put(&b)?;
    let mut piece = Vec::with_capacity(RECORDS_PER_PIECE * 16);
    for records in [c.positions, c.prev_positions, c.velocities] {
        debug_assert_eq!(records.len(), n, "one record of each kind per particle");
        for chunk in records.chunks(RECORDS_PER_PIECE) {
            piece.clear();
            piece.extend(chunk.iter().flatten().flat_map(|v| v.to_le_bytes()));
            put(&piece)?;
        }
    }
    b.clear();
    b.extend_from_slice(&(c.caches.len() as u32).to_le_bytes());
    for m in c.caches {
        b.extend_from_slice(&m.samples.to_le_bytes());
        b.extend_from_slice(&m.bytes.to_le_bytes());
        b.extend_from_slice(&(m.state.len() as u64).to_le_bytes());
        b.extend_from_slice(&m.state);
    }
    b.extend_from_slice(&c.stats_bytes.to_le_bytes());
    put(&b)
}

/// The bytes of `checkpoint` in the format above (the same bytes [`write_checkpoint`] writes).
pub fn encode(c: &Checkpoint) -> Vec<u8> {
    let n = c.positions.len();
    let mut b = Vec::with_capacity(72 + n * 48 + c.caches.iter().map(|m| 20 + m.state.len()).sum::<usize>());
    let mut put = |bytes: &[u8]| {
        b.extend_from_slice(bytes);
        Ok(())
    };
    encode_pieces(&c.view(), &mut put).expect("a vector takes every byte");
    let mut h = Fnv64::default();
    h.write(&b);
    b.extend_from_slice(&h.finish().to_le_bytes());
    b
}

/// Writes `checkpoint` to `path` atomically, through a [`StagedFile`]: to `path.partial`,
/// synced, then renamed over `path`, so that a crash leaves the previous checkpoint or this one,
/// never a part of one. The bytes go to the file piece by piece, the checksum summed on the way:
/// the state is never copied whole. Its errors are the operating system's, without the file's
/// name (the caller names the file), as [`StagedFile`]'s.
pub fn write_checkpoint(path: &Path, checkpoint: &CheckpointView<'_>) -> io::Result<()> {
    let mut file = StagedFile::create(path)?;
    let mut h = Fnv64::default();
    encode_pieces(checkpoint, &mut |bytes| {
        h.write(bytes);
        file.write(bytes)
    })?;
    file.write(&h.finish().to_le_bytes())?;
    file.commit().map(drop)
}

/// Reads and checks the checkpoint at `path`, at most [`MAX_CHECKPOINT_BYTES`] (see
/// [`crate::bounded`]).
pub fn read_checkpoint(path: &Path) -> Result<Checkpoint, CheckpointError> {
    let bytes =
        read_bounded(path, MAX_CHECKPOINT_BYTES, Accept::RegularFiles).map_err(|e| match e.problem {
            ReadProblem::Io(source) => CheckpointError::Read { path: e.path, source },
            ReadProblem::TooLarge { len, limit } => {
                CheckpointError::Format(format!("{len} bytes, more than the {limit} a checkpoint may have"))
            }
            ReadProblem::NotAFile => CheckpointError::Format("not a regular file".to_string()),
        })?;
    decode(&bytes)
}

/// A cursor over the bytes being decoded.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], CheckpointError> {
        let rest = self.bytes.len() - self.at;
        if n > rest {
            return Err(CheckpointError::Format(format!(
                "cut short: {what} needs {n} bytes at byte {}, {rest} remain",
                self.at
            )));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], CheckpointError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    fn u32(&mut self, what: &str) -> Result<u32, CheckpointError> {
        self.array(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, CheckpointError> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// A count of items of `size` bytes each that must fit in what remains.
    fn count(&mut self, size: u64, what: &str) -> Result<usize, CheckpointError> {
        let n = self.u64(what)?;
        let rest = (self.bytes.len() - self.at) as u64;
        if n.checked_mul(size).is_none_or(|total| total > rest) {
            return Err(CheckpointError::Format(format!(
                "{what}: {n} does not fit the {rest} bytes that remain"
            )));
        }
        Ok(n as usize)
    }

    fn records(&mut self, n: usize, what: &str) -> Result<Vec<[f32; 4]>, CheckpointError> {
        let bytes = self.take(n * 16, what)?;
        Ok(bytes
            .chunks_exact(16)
            .map(|r| {
                std::array::from_fn(|k| {
                    f32::from_le_bytes([r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]])
                })
            })
            .collect())
    }
}

/// Decodes and checks checkpoint bytes.
pub fn decode(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
    let format = |m: String| CheckpointError::Format(m);
    if bytes.len() < MAGIC.len() + 8 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(format("it does not start with \"WEFTCKPT\"".into()));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    let mut h = Fnv64::default();
    h.write(body);
    if h.finish().to_le_bytes() != sum {
        return Err(format("its checksum does not match (the file is damaged or cut short)".into()));
    }
    let mut r = Reader { bytes: body, at: MAGIC.len() };
    let version = r.u32("the version")?;
    if version != VERSION {
        return Err(format(format!("version {version}; this weft reads version {VERSION}")));
    }
    let fingerprint = r.u64("the fingerprint")?;
    let frame = r.u32("the frame")?;
    let time = f64::from_le_bytes(r.array("the time")?);
    if !time.is_finite() || time < 0.0 {
        return Err(format(format!("time {time} s is not a finite time ≥ 0")));
    }
    let substeps = r.u32("the substep count")?;
    if substeps == 0 {
        return Err(format("the substep count is 0".into()));
    }
    let stats_since = r.u64("the sweeps since the last full statistics")?;
    let n = r.count(48, "the particle count")?;
    let positions = r.records(n, "the positions")?;
    let prev_positions = r.records(n, "the previous positions")?;
    let velocities = r.records(n, "the velocities")?;
    if let Some(i) = [&positions, &prev_positions, &velocities]
        .iter()
        .flat_map(|v| v.iter().enumerate())
        .find_map(|(i, p)| p.iter().any(|c| !c.is_finite()).then_some(i))
    {
        return Err(format(format!("particle {i} is not finite")));
    }
    let caches = r.u32("the cache count")? as usize;
    // Each cache takes at least 20 bytes: bounds the allocation by the file's length.
    if caches as u64 * 20 > (body.len() - r.at) as u64 {
        return Err(format(format!("{caches} caches do not fit the bytes that remain")));
    }
    let mut marks = Vec::with_capacity(caches);
    for _ in 0..caches {
        let samples = r.u32("a cache's samples")?;
        let bytes = r.u64("a cache's length")?;
        let len = r.count(1, "a cache's state length")?;
        let state = r.take(len, "a cache's state")?.to_vec();
        marks.push(CacheMark { samples, bytes, state });
    }
    let stats_bytes = r.u64("the statistics length")?;
    if r.at != body.len() {
        return Err(format(format!("{} bytes left over after the statistics length", body.len() - r.at)));
    }
    Ok(Checkpoint {
        fingerprint,
        frame,
        time,
        substeps,
        stats_since,
        positions,
        prev_positions,
        velocities,
        caches: marks,
        stats_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        Checkpoint {
            fingerprint: 0x1234_5678_9abc_def0,
            frame: 7,
            time: 0.7,
            substeps: 16,
            stats_since: 45,
            positions: vec![[1.0, 2.0, 3.0, 0.5], [4.0, 5.0, 6.0, 0.0]],
            prev_positions: vec![[1.0, 2.0, 2.9, 0.0], [4.0, 5.0, 6.0, 0.0]],
            velocities: vec![[0.0, 0.0, 1.0, 0.0], [0.0; 4]],
            caches: vec![
                CacheMark { samples: 8, bytes: 32 + 8 * 24, state: Vec::new() },
                CacheMark { samples: 8, bytes: 999, state: vec![7; 8 * 24] },
            ],
            stats_bytes: 321,
        }
    }

    #[test]
    fn round_trip_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CHECKPOINT_FILE);
        write_checkpoint(&path, &sample().view()).unwrap();
        assert_eq!(read_checkpoint(&path).unwrap(), sample());
        assert!(!crate::staged::partial_path(&path).exists(), "the temporary file was renamed");
    }

    #[test]
    fn the_file_written_in_pieces_holds_the_encoded_bytes() {
        // Enough particles for several pieces, and a last piece cut short.
        let n = 2 * RECORDS_PER_PIECE + 5;
        let record = |i: usize, k: f32| [i as f32, k, -(i as f32), 0.25];
        let big = Checkpoint {
            positions: (0..n).map(|i| record(i, 1.0)).collect(),
            prev_positions: (0..n).map(|i| record(i, 2.0)).collect(),
            velocities: (0..n).map(|i| record(i, 3.0)).collect(),
            ..sample()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CHECKPOINT_FILE);
        write_checkpoint(&path, &big.view()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), encode(&big));
        assert_eq!(read_checkpoint(&path).unwrap(), big);
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_a_clean_error() {
        let bytes = encode(&sample());
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "cut to {len} bytes");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(decode(&b).is_err(), "byte {i} flipped");
        }
    }

    #[test]
    fn huge_counts_fail_before_allocating() {
        // A valid checksum over a body whose particle count claims 2^60 particles.
        let mut body = encode(&Checkpoint { substeps: 1, ..Checkpoint::default() });
        body.truncate(body.len() - 8);
        let n_at = MAGIC.len() + 4 + 8 + 4 + 8 + 4 + 8;
        body[n_at..n_at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
        let mut h = Fnv64::default();
        h.write(&body);
        body.extend_from_slice(&h.finish().to_le_bytes());
        let e = decode(&body).unwrap_err().to_string();
        assert!(e.contains("the particle count"), "{e}");
    }

    #[test]
    fn fnv_is_the_published_function() {
        // FNV-1a 64 test vectors.
        let mut h = Fnv64::default();
        assert_eq!(h.finish(), 0xcbf2_9ce4_8422_2325);
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
        let mut h = Fnv64::default();
        h.write(b"foobar");
        assert_eq!(h.finish(), 0x8594_4171_f739_67e8);
    }
}
