//! A client for git's builtin fsmonitor daemon: "what changed in the working tree since
//! token T?".
//!
//! The daemon listens on a Unix socket in the git directory (`fsmonitor--daemon.ipc`).
//! One request is the token as pkt-lines and a flush packet; the answer is pkt-lines up
//! to a flush: the daemon's current token and a NUL, then either `/` and a NUL (the
//! trivial answer: "assume everything changed", given for a token of another daemon
//! instance, a truncated history or a token it does not understand) or every changed
//! path, each ended by a NUL. Before answering, the daemon writes a cookie file and waits
//! for its own event, so everything that happened before the request is in the answer.
//!
//! This is a socket, not a program: nothing is started, so it does not go through the
//! process door. The repository is hostile, so the socket is only used where git itself
//! puts it by default (a daemon that moved it elsewhere — `fsmonitor.socketDir`, a
//! remote file system — is simply not asked), only when it is a socket owned by us in a
//! git directory owned by us, never through a symbolic link, and only when the process
//! answering runs as us. Every step has a deadline and every answer a size cap: a daemon
//! that is slow, silent, or says too much means "changed", never a wait.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The socket's name in the git directory.
const SOCKET: &str = "fsmonitor--daemon.ipc";
/// How long one exchange (connect, ask, read the answer) may take.
pub(crate) const DEADLINE: Duration = Duration::from_millis(500);
/// More answer than this is not read: so many changes just mean "changed".
const ANSWER_CAP: usize = 64 * 1024;
/// The longest token kept; the daemon's are about 50 bytes.
const TOKEN_CAP: usize = 256;
/// A token no daemon ever issued: the daemon answers it trivially, with its own token.
pub(crate) const NO_TOKEN: &str = "builtin:gitward-none:0";

/// What the daemon said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    /// The daemon's token now: changes after this answer are reported against it.
    pub token: String,
    /// Whether anything may have changed since the token asked about.
    pub changed: bool,
}

/// Asks the daemon of the repository whose git directory is `git_dir` what changed since
/// `since`. `None` when there is no usable daemon or its answer is not understood.
pub(crate) async fn changes_since(git_dir: &Path, since: &str) -> Option<Answer> {
    let socket = git_dir.join(SOCKET);
    if !owned_by_us(git_dir, &socket) {
        return None;
    }
    let exchange = async {
        let mut stream = tokio::net::UnixStream::connect(&socket).await.ok()?;
        // The path was checked before connecting; whoever answers must be us too, so a
        // socket swapped in between cannot speak for the daemon.
        let peer = stream.peer_cred().ok()?;
        if peer.uid() != rustix::process::geteuid().as_raw() {
            return None;
        }
        stream.write_all(&request(since)?).await.ok()?;
        let mut answer = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        let mut packets = Packets::default();
        loop {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            answer.extend_from_slice(&chunk[..n]);
            match packets.feed(&answer)? {
                Fed::More => {}
                Fed::Done(payload) => return parse(&payload),
                Fed::TooMuch(head) => return parse_head(&head),
            }
        }
    };
    tokio::time::timeout(DEADLINE, exchange)
        .await
        .ok()
        .flatten()
}

/// The socket is a socket (not a link to one), and it and its directory are ours.
fn owned_by_us(git_dir: &Path, socket: &Path) -> bool {
    let uid = rustix::process::geteuid().as_raw();
    let dir_ok = std::fs::symlink_metadata(git_dir).is_ok_and(|m| m.is_dir() && m.uid() == uid);
    dir_ok
        && std::fs::symlink_metadata(socket)
            .is_ok_and(|m| m.file_type().is_socket() && m.uid() == uid)
}

/// The token as pkt-lines and a flush packet. A token is short text without NULs.
pub(crate) fn request(token: &str) -> Option<Vec<u8>> {
    if token.is_empty() || token.len() > TOKEN_CAP || token.bytes().any(|b| b == 0) {
        return None;
    }
    let mut out = format!("{:04x}", token.len() + 4).into_bytes();
    out.extend_from_slice(token.as_bytes());
    out.extend_from_slice(b"0000");
    Some(out)
}

/// Where reading pkt-lines stands.
pub(crate) enum Fed {
    /// The answer is not complete yet.
    More,
    /// The whole payload, up to the flush packet.
    Done(Vec<u8>),
    /// The payload outgrew the cap: its first bytes.
    TooMuch(Vec<u8>),
}

/// An incremental pkt-line reader over a growing buffer.
#[derive(Default)]
pub(crate) struct Packets {
    at: usize,
    payload: Vec<u8>,
}

impl Packets {
    /// Reads the complete packets of `buf` past those already read. `None` for bytes that
    /// are not pkt-lines.
    pub(crate) fn feed(&mut self, buf: &[u8]) -> Option<Fed> {
        while let Some(header) = buf.get(self.at..self.at + 4) {
            let len = usize::from_str_radix(std::str::from_utf8(header).ok()?, 16).ok()?;
            if len == 0 {
                return Some(Fed::Done(std::mem::take(&mut self.payload)));
            }
            // 1 to 3 are special packets the daemon never sends here.
            if len < 4 {
                return None;
            }
            let Some(data) = buf.get(self.at + 4..self.at + len) else {
                break;
            };
            self.payload.extend_from_slice(data);
            self.at += len;
            if self.payload.len() > ANSWER_CAP {
                return Some(Fed::TooMuch(std::mem::take(&mut self.payload)));
            }
        }
        if buf.len() > self.at + 4 + ANSWER_CAP {
            return Some(Fed::TooMuch(std::mem::take(&mut self.payload)));
        }
        Some(Fed::More)
    }
}

/// A token as the daemon writes it: `builtin:<id>:<sequence number>`, printable.
fn token(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let rest = text.strip_prefix("builtin:")?;
    let (id, seq) = rest.rsplit_once(':')?;
    let printable = text.len() <= TOKEN_CAP && text.bytes().all(|b| b.is_ascii_graphic());
    (printable && !id.is_empty() && !seq.is_empty() && seq.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.to_owned())
}

/// A complete answer: the token, then nothing, the trivial `/`, or changed paths.
pub(crate) fn parse(payload: &[u8]) -> Option<Answer> {
    let nul = payload.iter().position(|b| *b == 0)?;
    let token = token(&payload[..nul])?;
    let rest = &payload[nul + 1..];
    if !rest.is_empty() && rest.last() != Some(&0) {
        return None;
    }
    Some(Answer {
        token,
        changed: !rest.is_empty(),
    })
}

/// The first bytes of an answer too long to read: its token, and "changed".
fn parse_head(head: &[u8]) -> Option<Answer> {
    let nul = head.iter().position(|b| *b == 0)?;
    Some(Answer {
        token: token(&head[..nul])?,
        changed: true,
    })
}

#[cfg(test)]
#[path = "fsmonitor_ipc_tests.rs"]
mod tests;
