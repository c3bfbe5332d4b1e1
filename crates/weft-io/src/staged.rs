//! Files written under a temporary name and renamed into place only when complete.
//!
//! A cache file `NAME.pc2` is written as `NAME.pc2.partial` in the same directory (so the final
//! rename stays on one file system and is atomic). [`Staged::commit`] flushes nothing itself: each
//! file is closed with [`close`] (flush + `fsync`) before it is committed. If a [`Staged`] is
//! dropped without being committed — an error, a panic, a writer dropped early — every temporary
//! file it created is removed. A killed process leaves only `*.partial` files, which no reader
//! takes for a cache.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Suffix of a file being written.
pub(crate) const PARTIAL_SUFFIX: &str = ".partial";

/// Write buffer of every staged file (each cache and `stats.csv`), in bytes.
pub const WRITE_BUFFER: usize = 1 << 20;

/// A set of files being written under temporary names.
#[derive(Debug, Default)]
pub(crate) struct Staged {
    /// `(temporary, final)` paths, in creation order.
    files: Vec<(PathBuf, PathBuf)>,
    /// Renamed into place, or kept under their temporary names ([`Staged::keep`]): nothing to
    /// remove on drop.
    committed: bool,
}

/// The temporary name of `target`: `target` + [`PARTIAL_SUFFIX`].
pub(crate) fn partial_path(target: &Path) -> PathBuf {
    let mut name = OsString::from(target.as_os_str());
    name.push(PARTIAL_SUFFIX);
    PathBuf::from(name)
}

/// Flushes a writer and forces its file to disk, so that a rename after it publishes whole data.
pub(crate) fn close(writer: BufWriter<File>) -> io::Result<()> {
    let file = writer.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()
}

impl Staged {
    /// Creates (or truncates) the temporary file for `target` and returns a buffered writer to it.
    pub(crate) fn create(&mut self, target: PathBuf) -> io::Result<BufWriter<File>> {
        let temp = partial_path(&target);
        let file = File::create(&temp).map_err(|e| with_path(e, &temp))?;
        self.files.push((temp, target));
        Ok(BufWriter::with_capacity(WRITE_BUFFER, file))
    }

    /// Reopens the temporary file of `target` left by an earlier run (see `crate::checkpoint`),
    /// cut back to its first `len` bytes, and returns a buffered writer at its end. Fails if the
    /// file is missing or shorter than `len`.
    pub(crate) fn reopen(&mut self, target: PathBuf, len: u64) -> io::Result<BufWriter<File>> {
        let temp = partial_path(&target);
        let file = reopen_partial(&temp, len)?;
        self.files.push((temp, target));
        Ok(BufWriter::with_capacity(WRITE_BUFFER, file))
    }

    /// Takes over the complete temporary file of `target` left by an earlier run, to be renamed
    /// with the others. Fails if it is missing.
    pub(crate) fn adopt(&mut self, target: PathBuf) -> io::Result<()> {
        let temp = partial_path(&target);
        if !fs::metadata(&temp).map_err(|e| with_path(e, &temp))?.is_file() {
            return Err(with_path(io::Error::other("not a regular file"), &temp));
        }
        self.files.push((temp, target));
        Ok(())
    }

    /// Renames every temporary file to its final name, in creation order, and returns the final
    /// names. If a rename fails, the files already renamed are removed again (with the remaining
    /// temporary files, on drop), so no partial set is left that looks complete.
    pub(crate) fn commit(mut self) -> io::Result<Vec<PathBuf>> {
        for (done, (temp, target)) in self.files.iter().enumerate() {
            if let Err(e) = fs::rename(temp, target) {
                for (_, renamed) in &self.files[..done] {
                    let _ = fs::remove_file(renamed);
                }
                return Err(with_path(e, target));
            }
        }
        self.committed = true;
        Ok(self.files.iter().map(|(_, target)| target.clone()).collect())
    }
}

impl Staged {
    /// Leaves every temporary file where it is, as it stands, instead of removing it on drop: a
    /// bake stopped after a checkpoint, to be reopened by a resumed one.
    pub(crate) fn keep(&mut self) {
        self.committed = true;
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            for (temp, _) in &self.files {
                // Best effort: the file may not exist any more, and a drop cannot report.
                let _ = fs::remove_file(temp);
            }
        }
    }
}

/// One file written under `TARGET.partial` and renamed to `TARGET` by [`StagedFile::commit`]
/// (the statistics of a bake, its checkpoints, the demo's scene): the one-file form of the
/// staging that every cache writer uses. Dropped uncommitted (an error, a panic), it removes its temporary file.
///
/// Its errors are the operating system's, without the file's name (the caller names the file),
/// but for [`StagedFile::reopen`], whose errors name the temporary file.
#[derive(Debug)]
pub struct StagedFile {
    /// `None` once closed.
    out: Option<BufWriter<File>>,
    /// `TARGET.partial`; empty once committed.
    temp: PathBuf,
    /// The final path.
    target: PathBuf,
}

impl StagedFile {
    /// Creates (or truncates) `target.partial`.
    pub fn create(target: &Path) -> io::Result<Self> {
        let temp = partial_path(target);
        let file = File::create(&temp)?;
        Ok(StagedFile { out: Some(BufWriter::new(file)), temp, target: target.to_path_buf() })
    }

    /// Reopens `target.partial` left by an earlier run, cut back to its first `len` bytes (see
    /// [`reopen_partial`]).
    pub fn reopen(target: &Path, len: u64) -> io::Result<Self> {
        let temp = partial_path(target);
        let file = reopen_partial(&temp, len)?;
        Ok(StagedFile { out: Some(BufWriter::new(file)), temp, target: target.to_path_buf() })
    }

    /// The final path, `TARGET`.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.out {
            Some(out) => out.write_all(bytes),
            None => Err(io::Error::other("the file is already closed")),
        }
    }

    /// Flushes and syncs what is written so far; returns the file's length in bytes.
    pub fn sync(&mut self) -> io::Result<u64> {
        match &mut self.out {
            Some(out) => {
                out.flush()?;
                out.get_ref().sync_data()?;
                Ok(out.get_ref().metadata()?.len())
            }
            None => Err(io::Error::other("the file is already closed")),
        }
    }

    /// Flushes and syncs the file, renames it into place and returns its final path.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        if let Some(out) = self.out.take() {
            close(out)?;
        }
        fs::rename(&self.temp, &self.target)?;
        // Committed: nothing to remove on drop.
        self.temp = PathBuf::new();
        Ok(self.target.clone())
    }
}

impl StagedFile {
    /// Closes the file and leaves it under its temporary name, as it stands, for
    /// [`StagedFile::reopen`] (a bake stopped after a checkpoint): it is not removed.
    pub fn suspend(mut self) {
        drop(self.out.take());
        // Kept: nothing to remove on drop.
        self.temp = PathBuf::new();
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        // Close before removing (removing an open file fails on some systems).
        drop(self.out.take());
        if !self.temp.as_os_str().is_empty() {
            // Best effort: a drop cannot report, and the file may be gone already.
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Opens the temporary file `temp` left by an earlier run for writing at its end, after cutting it
/// back to its first `len` bytes (a length a checkpoint recorded). Fails, naming the file, if it
/// is missing or shorter than `len`.
pub fn reopen_partial(temp: &Path, len: u64) -> io::Result<File> {
    let mut file = OpenOptions::new().write(true).open(temp).map_err(|e| with_path(e, temp))?;
    let found = file.metadata().map_err(|e| with_path(e, temp))?.len();
    if found < len {
        let why = format!("{found} bytes, shorter than the {len} the checkpoint recorded");
        return Err(with_path(io::Error::new(io::ErrorKind::UnexpectedEof, why), temp));
    }
    file.set_len(len).map_err(|e| with_path(e, temp))?;
    file.seek(SeekFrom::End(0)).map_err(|e| with_path(e, temp))?;
    Ok(file)
}

/// Flushes a writer and forces its data to disk without closing it; returns the file's length.
pub(crate) fn sync(writer: &mut BufWriter<File>, path: &Path) -> io::Result<u64> {
    writer.flush().map_err(|e| with_path(e, path))?;
    writer.get_ref().sync_data().map_err(|e| with_path(e, path))?;
    Ok(writer.get_ref().metadata().map_err(|e| with_path(e, path))?.len())
}

/// Bytes written to a file between two [`Writeback`] starts: 4 MiB.
pub(crate) const WRITEBACK_EVERY: u64 = 4 << 20;

/// Starts the system writing a large file's data to disk while the file is still being written,
/// every [`WRITEBACK_EVERY`] bytes, so that the `fsync` that publishes it ([`close`]) finds little
/// left to write and returns soon: on a 2-core machine a 24 MB PC2 cache's `fsync` took 24 ms
/// at the end of a bake, the file otherwise dirty in the system's cache until then. Starting is
/// asynchronous (Linux's `sync_file_range` with `SYNC_FILE_RANGE_WRITE`: the call queues the
/// writes and does not wait for them); it changes no byte of the file, only when the system
/// writes it. Elsewhere than on Linux it does nothing.
#[derive(Debug, Default)]
pub(crate) struct Writeback {
    /// Bytes written since the last start.
    pending: u64,
}

impl Writeback {
    /// Records `bytes` more written to `file` (through its writer's buffer), and starts writing
    /// what the system holds of it once [`WRITEBACK_EVERY`] have been.
    pub(crate) fn wrote(&mut self, file: &File, bytes: usize) {
        self.pending += bytes as u64;
        if self.pending >= WRITEBACK_EVERY {
            self.pending = 0;
            start_writeback(file);
        }
    }
}

/// Queues the writing to disk of every dirty page of `file` (best effort: an error here changes
/// nothing, and the `fsync` that publishes the file reports any that matters).
#[cfg(target_os = "linux")]
fn start_writeback(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: `sync_file_range` reads and writes no memory of this process; the descriptor is
    // open for as long as `file` is borrowed, which outlasts the call.
    let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

/// Does nothing: the `fsync` that publishes the file writes it all.
#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File) {}

/// `error` with `path` in its message.
pub(crate) fn with_path(error: io::Error, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

/// Writes `bytes` and maps an error to one naming `path`.
pub(crate) fn write_all(out: &mut impl Write, bytes: &[u8], path: &Path) -> io::Result<()> {
    out.write_all(bytes).map_err(|e| with_path(e, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_set_leaves_nothing_and_commit_renames() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        {
            let mut s = Staged::default();
            let mut w = s.create(a.clone()).unwrap();
            w.write_all(b"x").unwrap();
            close(w).unwrap();
            assert!(partial_path(&a).exists());
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);

        let mut s = Staged::default();
        let w = s.create(a.clone()).unwrap();
        close(w).unwrap();
        assert_eq!(s.commit().unwrap(), vec![a.clone()]);
        assert!(a.exists() && !partial_path(&a).exists());
    }

    #[test]
    fn staged_file_is_removed_unless_committed_and_reopens_cut_back() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        {
            let mut f = StagedFile::create(&a).unwrap();
            f.write(b"abc").unwrap();
            assert_eq!(f.sync().unwrap(), 3);
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);

        let mut f = StagedFile::create(&a).unwrap();
        f.write(b"abcdef").unwrap();
        f.sync().unwrap();
        f.suspend(); // the temporary file stays, as after a crash
        assert!(partial_path(&a).exists() && !a.exists());
        let mut f = StagedFile::reopen(&a, 2).unwrap();
        f.write(b"x").unwrap();
        assert_eq!(f.target(), a.as_path());
        assert_eq!(f.commit().unwrap(), a);
        assert_eq!(fs::read(&a).unwrap(), b"abx");
        assert!(!partial_path(&a).exists());
    }
}
