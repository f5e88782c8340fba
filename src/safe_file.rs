//! Reading files that a repository, a workspace or another program controls.
//!
//! Such a file can be a symlink to a secret (`.git/rebase-merge/head-name` pointing at
//! the password file), a FIFO that blocks the first `open` forever, or a device that never
//! ends. Every read here therefore opens without following symlinks and without blocking
//! on a FIFO, accepts only a regular file (checked on the open descriptor, so nothing can
//! be swapped in between), and reads at most a cap. [`read_in`] goes further and refuses a
//! symlink at any step below a trusted directory, so a linked directory cannot lead the
//! read elsewhere either.
//!
//! Disk reads block the thread. [`off_thread`] moves a batch of them onto the blocking
//! pool under a deadline and the call's cancellation, so a slow or stuck file system never
//! stalls the async workers that answer other requests.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Component, Path};
use std::time::Duration;

use rustix::fs::{Mode, OFlags};
use tokio_util::sync::CancellationToken;

/// How long one batch of file reads may take before the call gives up on it.
pub const READ_DEADLINE: Duration = Duration::from_secs(10);

/// Why a file was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("missing")]
    Missing,
    /// A symlink, FIFO, device, socket or directory.
    #[error("not a regular file")]
    NotRegular,
    #[error("too large")]
    TooLarge,
    /// The relative path was absolute or climbed with `..`.
    #[error("outside its directory")]
    Escapes,
    #[error("unreadable")]
    Unreadable,
}

impl Refusal {
    fn of(err: rustix::io::Errno) -> Refusal {
        use rustix::io::Errno;
        match err {
            Errno::NOENT => Refusal::Missing,
            // What `O_NOFOLLOW` on a symlink and `O_DIRECTORY` on a non-directory give.
            Errno::LOOP | Errno::NOTDIR | Errno::MLINK => Refusal::NotRegular,
            _ => Refusal::Unreadable,
        }
    }
}

/// Flags of the final open: no symlink, no blocking on a FIFO, no controlling terminal.
fn file_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC
}

fn regular(file: File) -> Result<(File, Metadata), Refusal> {
    let meta = file.metadata().map_err(|_| Refusal::Unreadable)?;
    if meta.is_file() {
        Ok((file, meta))
    } else {
        Err(Refusal::NotRegular)
    }
}

/// Opens `path` if its last component is a regular file, not a symlink.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), Refusal> {
    let fd = rustix::fs::open(path, file_flags(), Mode::empty()).map_err(Refusal::of)?;
    regular(File::from(fd))
}

/// Opens `base/rel` if no component of `rel` is a symlink and the file is regular.
/// `base` itself is trusted (it was resolved and checked by the caller).
pub fn open_in(base: &Path, rel: &Path) -> Result<(File, Metadata), Refusal> {
    let mut names = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            _ => return Err(Refusal::Escapes),
        }
    }
    let Some((last, dirs)) = names.split_last() else {
        return Err(Refusal::NotRegular);
    };
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(
        base,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(Refusal::of)?;
    for name in dirs {
        dir = rustix::fs::openat(&dir, *name, dir_flags, Mode::empty()).map_err(Refusal::of)?;
    }
    let fd = rustix::fs::openat(&dir, *last, file_flags(), Mode::empty()).map_err(Refusal::of)?;
    regular(File::from(fd))
}

/// Reads an opened file whole, refusing one longer than `cap` bytes.
fn whole(file: File, meta: &Metadata, cap: u64) -> Result<Vec<u8>, Refusal> {
    if meta.len() > cap {
        return Err(Refusal::TooLarge);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // One byte more than the cap tells a file that grew since `fstat`.
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| Refusal::Unreadable)?;
    if bytes.len() as u64 > cap {
        return Err(Refusal::TooLarge);
    }
    Ok(bytes)
}

/// Reads at most the first `cap` bytes of an opened file.
fn prefix(file: File, cap: u64) -> Result<Vec<u8>, Refusal> {
    let mut bytes = Vec::new();
    file.take(cap)
        .read_to_end(&mut bytes)
        .map_err(|_| Refusal::Unreadable)?;
    Ok(bytes)
}

/// The whole of `base/rel` when it is a regular file of at most `cap` bytes reached
/// without a symlink.
pub fn read_in(base: &Path, rel: impl AsRef<Path>, cap: u64) -> Result<Vec<u8>, Refusal> {
    let (file, meta) = open_in(base, rel.as_ref())?;
    whole(file, &meta, cap)
}

/// The first `cap` bytes of `base/rel`, reached without a symlink.
pub fn read_prefix_in(base: &Path, rel: impl AsRef<Path>, cap: u64) -> Result<Vec<u8>, Refusal> {
    let (file, _) = open_in(base, rel.as_ref())?;
    prefix(file, cap)
}

/// The whole of `path` when it is a regular file of at most `cap` bytes; only the last
/// component is checked for a symlink.
pub fn read(path: &Path, cap: u64) -> Result<Vec<u8>, Refusal> {
    let (file, meta) = open_regular(path)?;
    whole(file, &meta, cap)
}

/// The first `cap` bytes of `path`; only the last component is checked for a symlink.
pub fn read_prefix(path: &Path, cap: u64) -> Result<Vec<u8>, Refusal> {
    let (file, _) = open_regular(path)?;
    prefix(file, cap)
}

/// The trimmed text of a small file as UTF-8 (lossy), empty content counting as absent.
pub fn text_in(base: &Path, rel: impl AsRef<Path>, cap: u64) -> Option<String> {
    let bytes = read_in(base, rel, cap).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Why [`off_thread`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Stalled {
    #[error("reading the repository's files took longer than {}s", READ_DEADLINE.as_secs())]
    Deadline,
    #[error("the request was cancelled")]
    Cancelled,
    #[error("reading the repository's files failed unexpectedly")]
    Failed,
}

/// Runs blocking file work on the blocking pool, giving up at [`READ_DEADLINE`] or when
/// `cancel` fires. A read that is stuck keeps its pool thread, never an async worker.
pub async fn off_thread<T, F>(cancel: &CancellationToken, work: F) -> Result<T, Stalled>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let task = tokio::task::spawn_blocking(work);
    tokio::select! {
        joined = tokio::time::timeout(READ_DEADLINE, task) => match joined {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) => Err(Stalled::Failed),
            Err(_) => Err(Stalled::Deadline),
        },
        () = cancel.cancelled() => Err(Stalled::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_fifos_and_devices_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::write(base.join("plain"), "one\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", base.join("link")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", base.join("zero")).unwrap();
        std::fs::create_dir(base.join("real")).unwrap();
        std::fs::write(base.join("real/inner"), "two\n").unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("linked-dir")).unwrap();
        let fifo = base.join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();

        assert_eq!(read_in(base, "plain", 64).unwrap(), b"one\n");
        assert_eq!(read_in(base, "real/inner", 64).unwrap(), b"two\n");
        assert_eq!(read_in(base, "link", 1 << 20), Err(Refusal::NotRegular));
        assert_eq!(read_in(base, "zero", 1 << 20), Err(Refusal::NotRegular));
        assert_eq!(read_in(base, "fifo", 64), Err(Refusal::NotRegular));
        assert_eq!(
            read_in(base, "linked-dir/inner", 64),
            Err(Refusal::NotRegular)
        );
        assert_eq!(read_in(base, "real", 64), Err(Refusal::NotRegular));
        assert_eq!(read_in(base, "nothing", 64), Err(Refusal::Missing));
        assert_eq!(read_in(base, "../x", 64), Err(Refusal::Escapes));
        assert_eq!(read_in(base, "/etc/passwd", 64), Err(Refusal::Escapes));
        assert_eq!(read_in(base, "plain", 2), Err(Refusal::TooLarge));
        assert_eq!(read_prefix_in(base, "plain", 2).unwrap(), b"on");
        assert_eq!(read(&base.join("link"), 1 << 20), Err(Refusal::NotRegular));
        assert_eq!(read(&fifo, 64), Err(Refusal::NotRegular));
        assert_eq!(read_prefix(&base.join("plain"), 3).unwrap(), b"one");
    }
}
