//! Reading a file under a byte limit: the one way weft reads a file it is given (a scene, an OBJ
//! mesh, a pin file, a PC2 cache, a checkpoint).
//!
//! [`read_bounded`] reads a whole file. The limit is checked twice: against the file's length
//! when it is opened (a file over the limit is refused before a byte is read, so a huge file costs
//! nothing), and while reading (at most `limit + 1` bytes are ever read, so a file that grows
//! between the two, or a special file whose length says nothing, is refused too, never read past
//! the limit). [`BoundedFile`] is the same read in two parts, for a format whose header says how
//! long the rest must be (PC2): the header first, then the rest under the limit it implies.
//!
//! Errors are a [`ReadError`]: the file and a [`ReadProblem`], one line
//! (`FILE: the file is 300 bytes, more than the limit of 100 bytes`). A caller with error types
//! of its own (a scene's, an OBJ file's) maps the [`ReadProblem`] into them.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Which files a read accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept {
    /// Regular files only: a device or a pipe is refused ([`ReadProblem::NotAFile`]) before
    /// anything is read (meshes, pin files, checkpoints).
    RegularFiles,
    /// Any file that can be read, a pipe too (a scene, a PC2 cache).
    AnyFile,
}

/// Why a file could not be read. Its `Display` does not name the file ([`ReadError`]'s does).
#[derive(Debug, thiserror::Error)]
pub enum ReadProblem {
    /// The operating system's error (no such file, no permission, a directory, ...), or too
    /// little memory for the file's bytes.
    #[error("cannot read the file: {0}")]
    Io(io::Error),
    /// A special file (a device, a pipe, a directory) where [`Accept::RegularFiles`] asked for a
    /// regular one; nothing was read.
    #[error("not a regular file")]
    NotAFile,
    /// Longer than the limit: nothing was read (the length when opened was over it), or the read
    /// stopped one byte past the limit (the file grew, or is a special file).
    #[error("the file is {len} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// The length found, in bytes: the file's length when opened, or `limit + 1` when the
        /// read found more bytes than the limit (the file may be longer still).
        len: u64,
        /// The limit, in bytes.
        limit: u64,
    },
}

/// A [`ReadProblem`] with the file it is about: `FILE: PROBLEM`.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct ReadError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub problem: ReadProblem,
}

/// Reads the whole file at `path`, at most `limit` bytes (see the [module docs](self)).
///
/// ```
/// use weft_io::bounded::{Accept, ReadProblem, read_bounded};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("pins.txt");
/// std::fs::write(&path, "0\n1\n2\n").unwrap();
/// assert_eq!(read_bounded(&path, 6, Accept::RegularFiles).unwrap(), b"0\n1\n2\n");
/// let e = read_bounded(&path, 5, Accept::RegularFiles).unwrap_err();
/// assert!(matches!(e.problem, ReadProblem::TooLarge { len: 6, limit: 5 }));
/// assert_eq!(
///     e.to_string(),
///     format!("{}: the file is 6 bytes, more than the limit of 5 bytes", path.display())
/// );
/// ```
pub fn read_bounded(path: &Path, limit: u64, accept: Accept) -> Result<Vec<u8>, ReadError> {
    BoundedFile::open(path, accept)?.read_rest(limit)
}

/// A file open for a bounded read: [`BoundedFile::read_head`] reads its first bytes,
/// [`BoundedFile::read_rest`] the rest, under a limit.
#[derive(Debug)]
pub struct BoundedFile {
    file: File,
    path: PathBuf,
    /// The file's length when opened, in bytes.
    opened_len: u64,
    /// Bytes read so far.
    read: u64,
}

impl BoundedFile {
    /// Opens the file at `path` and takes its length; refuses a file `accept` does not take.
    pub fn open(path: &Path, accept: Accept) -> Result<Self, ReadError> {
        let fail = |problem| ReadError { path: path.to_path_buf(), problem };
        let file = File::open(path).map_err(|e| fail(ReadProblem::Io(e)))?;
        let meta = file.metadata().map_err(|e| fail(ReadProblem::Io(e)))?;
        if accept == Accept::RegularFiles && !meta.is_file() {
            return Err(fail(ReadProblem::NotAFile));
        }
        Ok(BoundedFile { file, path: path.to_path_buf(), opened_len: meta.len(), read: 0 })
    }

    /// The file's length when it was opened, in bytes (0 for most special files).
    pub fn opened_len(&self) -> u64 {
        self.opened_len
    }

    /// Reads the next `n` bytes, or fewer where the file ends.
    pub fn read_head(&mut self, n: usize) -> Result<Vec<u8>, ReadError> {
        let mut head = Vec::with_capacity(n);
        (&mut self.file).take(n as u64).read_to_end(&mut head).map_err(|e| self.fail(ReadProblem::Io(e)))?;
        self.read += head.len() as u64;
        Ok(head)
    }

    /// Reads the rest of the file, at most `limit` bytes: refused before reading if the length
    /// left when opened is over `limit`, and if more than `limit` bytes turn up while reading.
    pub fn read_rest(mut self, limit: u64) -> Result<Vec<u8>, ReadError> {
        let left = self.opened_len.saturating_sub(self.read);
        if left > limit {
            return Err(self.fail(ReadProblem::TooLarge { len: left, limit }));
        }
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(left as usize)
            .map_err(|e| self.fail(ReadProblem::Io(io::Error::new(io::ErrorKind::OutOfMemory, e))))?;
        // The length may have changed since it was taken: never read more than one byte past the
        // limit, which is enough to tell the file is over it.
        (&mut self.file)
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| self.fail(ReadProblem::Io(e)))?;
        if bytes.len() as u64 > limit {
            return Err(self.fail(ReadProblem::TooLarge { len: bytes.len() as u64, limit }));
        }
        Ok(bytes)
    }

    fn fail(&self, problem: ReadProblem) -> ReadError {
        ReadError { path: self.path.clone(), problem }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_refuses_one_byte_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, b"abcdef").unwrap();
        assert_eq!(read_bounded(&path, 6, Accept::AnyFile).unwrap(), b"abcdef");
        let e = read_bounded(&path, 5, Accept::AnyFile).unwrap_err();
        assert!(matches!(e.problem, ReadProblem::TooLarge { len: 6, limit: 5 }), "{e}");
        assert_eq!(read_bounded(&path, u64::MAX, Accept::AnyFile).unwrap(), b"abcdef");
    }

    #[test]
    fn refuses_a_special_file_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_bounded(dir.path(), 100, Accept::RegularFiles).unwrap_err();
        assert!(matches!(e.problem, ReadProblem::NotAFile), "{e}");
        assert_eq!(e.to_string(), format!("{}: not a regular file", dir.path().display()));
        // A directory opens, but cannot be read (its length, often 4096, is below the limit).
        let e = read_bounded(dir.path(), 1 << 20, Accept::AnyFile).unwrap_err();
        assert!(matches!(e.problem, ReadProblem::Io(_)), "{e}");
        let missing = dir.path().join("missing");
        let e = read_bounded(&missing, 100, Accept::AnyFile).unwrap_err();
        assert!(matches!(&e.problem, ReadProblem::Io(io) if io.kind() == io::ErrorKind::NotFound), "{e}");
        assert!(e.to_string().starts_with(&format!("{}: cannot read the file: ", missing.display())), "{e}");
    }

    #[test]
    fn a_file_that_grows_after_it_was_opened_is_not_read_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("growing.txt");
        std::fs::write(&path, b"abc").unwrap();
        let file = BoundedFile::open(&path, Accept::RegularFiles).unwrap();
        assert_eq!(file.opened_len(), 3);
        // Grows to 1 MiB between the length check and the read.
        let mut more = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        more.write_all(&vec![b'x'; 1 << 20]).unwrap();
        let e = file.read_rest(10).unwrap_err();
        assert!(matches!(e.problem, ReadProblem::TooLarge { len: 11, limit: 10 }), "{e}");
    }

    #[test]
    fn a_head_then_the_rest_under_the_limit_the_head_implies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.bin");
        std::fs::write(&path, b"\x03abc").unwrap();
        let mut file = BoundedFile::open(&path, Accept::AnyFile).unwrap();
        let head = file.read_head(1).unwrap();
        assert_eq!(head, [3]);
        assert_eq!(file.read_rest(head[0] as u64).unwrap(), b"abc");
        let mut file = BoundedFile::open(&path, Accept::AnyFile).unwrap();
        assert_eq!(file.read_head(10).unwrap(), b"\x03abc", "a short file: what there is");
        assert_eq!(file.read_rest(0).unwrap(), b"");
        let mut file = BoundedFile::open(&path, Accept::AnyFile).unwrap();
        file.read_head(1).unwrap();
        let e = file.read_rest(2).unwrap_err();
        assert!(matches!(e.problem, ReadProblem::TooLarge { len: 3, limit: 2 }), "{e}");
    }
}
