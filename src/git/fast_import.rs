//! Commits and refs written by one `git fast-import` run: each commit starts from an
//! existing tree and applies removals and new entries (contents given inline, stored raw
//! as `hash-object --no-filters` would store them, or named by an existing object), and
//! refs are created at existing commits. One process replaces the chain of entering
//! changes in an index, writing its tree, committing it and creating the refs; and only
//! the directories on a changed path are read and written again.
//!
//! An [`Import`] is written piece by piece. Started early, the process runs while the
//! caller still works out the rest of the stream and is handed each piece as it comes
//! (`feed`); otherwise it starts at [`Import::finish`] with the whole stream. Refs move
//! only at the end of a run that reached `done`: an import dropped before it finished
//! resets every ref it named and ends cleanly, so it moves none and leaves no crash report.
//!
//! Nothing repository-controlled runs: fast-import starts no hook, filter or helper. Its
//! objects go into one new pack, which is kept even when small (`fastimport.unpackLimit`
//! would otherwise start `unpack-objects`), compressed at zlib's fastest level (a restore
//! point's largest blob, the index file, is written once and read rarely) and not flushed
//! to disk before the refs move, as git's own loose objects are not by default
//! (`core.fsync` without the pack components). Path names match byte for byte, whatever
//! `core.ignoreCase` says.

mod feed;

use std::collections::HashMap;

use super::{Git, GitError, Oid};
use feed::Feed;

/// What one entry of a commit's tree becomes.
pub enum Change {
    /// The path is removed (absent is fine).
    Remove,
    /// The path holds a blob with this mode.
    Put { mode: u32, content: Content },
}

/// A blob's bytes, an object already in the database, or a blob written earlier in the
/// same run ([`Import::blob`]).
pub enum Content {
    Bytes(Vec<u8>),
    Object(Oid),
    Mark(Mark),
}

/// A commit to write, at a new ref.
pub struct NewCommit {
    pub ref_name: String,
    pub message: String,
    /// The tree the changes apply to; `None` starts empty.
    pub root: Option<Oid>,
    /// Applied in order; a path a later change adds below a removed one is kept. Paths
    /// are bytes: a name need not be UTF-8.
    pub changes: Vec<(Vec<u8>, Change)>,
}

/// An object of the stream, named by its mark until the run tells its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mark(usize);

/// The marks of one commit written by [`Import::commit`]: the commit's, and those of its
/// inline blobs in the order its changes listed them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitMarks {
    pub commit: Mark,
    pub blobs: Vec<Mark>,
}

/// What a finished run wrote: each mark's object, and each commit's tree.
#[derive(Debug, Default)]
pub struct Written {
    objects: HashMap<Mark, Oid>,
    trees: HashMap<Mark, Oid>,
}

impl Written {
    pub fn object(&self, mark: Mark) -> Result<Oid, GitError> {
        self.objects
            .get(&mark)
            .cloned()
            .ok_or_else(|| GitError::internal("fast-import gave no object for a mark"))
    }

    /// The tree of the commit at `mark`.
    pub fn tree(&self, mark: Mark) -> Result<Oid, GitError> {
        self.trees
            .get(&mark)
            .cloned()
            .ok_or_else(|| GitError::internal("fast-import gave no tree for a commit"))
    }
}

/// What the run is asked to tell at the end, in order.
enum Ask {
    Object(Mark),
    CommitAndTree(Mark),
}

/// How much of fast-import's answers is read: one line per mark.
const ANSWER_CAP: usize = super::DEFAULT_CAP * 4;

/// The settings of every run: a pack of its own whatever its size, zlib's fastest level,
/// no flush of the pack before the refs move, and byte-exact paths.
const SETTINGS: &[&str] = &[
    "-c",
    "fastimport.unpackLimit=0",
    "-c",
    "pack.compression=1",
    "-c",
    "core.fsync=-pack,-pack-metadata",
    "-c",
    "core.ignoreCase=false",
    "fast-import",
    "--quiet",
    "--depth=0",
];

enum Run {
    /// Not started: the whole stream goes to it at the end.
    Later(Vec<Vec<u8>>),
    Started(Feed),
}

/// One fast-import run, written piece by piece.
pub struct Import<'g> {
    git: Git<'g>,
    stream: Stream,
    run: Option<Run>,
}

/// `"path"` in C quoting, as fast-import reads it: any byte but NUL may appear.
fn quoted(path: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in path {
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            0..0x20 | 0x7f => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// The stream of one run as it is written: whole commands, in pieces (a large blob is a
/// piece of its own rather than copied into a buffer).
#[derive(Default)]
struct Stream {
    when: i64,
    pieces: Vec<Vec<u8>>,
    buf: Vec<u8>,
    marks: usize,
    asks: Vec<Ask>,
    /// Every ref the stream names.
    names: Vec<String>,
}

impl Stream {
    fn new(when: i64) -> Stream {
        Stream {
            when,
            buf: b"feature done\nfeature get-mark\nfeature ls\n".to_vec(),
            ..Stream::default()
        }
    }

    fn mark(&mut self) -> Mark {
        self.marks += 1;
        Mark(self.marks)
    }

    /// What was written since the last call.
    fn take(&mut self) -> Vec<Vec<u8>> {
        self.cut();
        std::mem::take(&mut self.pieces)
    }

    fn cut(&mut self) {
        if !self.buf.is_empty() {
            self.pieces.push(std::mem::take(&mut self.buf));
        }
    }

    fn blob(&mut self, bytes: Vec<u8>) -> Mark {
        let mark = self.mark();
        let head = format!("blob\nmark :{}\ndata {}\n", mark.0, bytes.len());
        self.buf.extend_from_slice(head.as_bytes());
        self.cut();
        self.pieces.push(bytes);
        self.buf.push(b'\n');
        self.asks.push(Ask::Object(mark));
        mark
    }

    fn commit(&mut self, commit: NewCommit) -> CommitMarks {
        let NewCommit {
            ref_name,
            message,
            root,
            changes,
        } = commit;
        let mut blobs = Vec::new();
        let mut lines = Vec::with_capacity(changes.len());
        for (path, change) in changes {
            let line = match change {
                Change::Remove => "D ".to_owned(),
                Change::Put { mode, content } => {
                    let what = match content {
                        Content::Bytes(bytes) => {
                            let mark = self.blob(bytes);
                            blobs.push(mark);
                            format!(":{}", mark.0)
                        }
                        Content::Object(oid) => oid.to_string(),
                        Content::Mark(mark) => format!(":{}", mark.0),
                    };
                    format!("M {mode:o} {what} ")
                }
            };
            lines.push((line, path));
        }
        let mark = self.mark();
        let when = self.when;
        let out = &mut self.buf;
        out.extend_from_slice(format!("commit {ref_name}\nmark :{}\n", mark.0).as_bytes());
        out.extend_from_slice(
            format!("committer gitward <gitward@localhost> {when} +0000\n").as_bytes(),
        );
        out.extend_from_slice(format!("data {}\n", message.len()).as_bytes());
        out.extend_from_slice(message.as_bytes());
        out.push(b'\n');
        if let Some(root) = &root {
            out.extend_from_slice(format!("M 040000 {root} \"\"\n").as_bytes());
        }
        for (line, path) in lines {
            out.extend_from_slice(line.as_bytes());
            quoted(&path, out);
            out.push(b'\n');
        }
        out.push(b'\n');
        self.names.push(ref_name);
        self.asks.push(Ask::CommitAndTree(mark));
        CommitMarks {
            commit: mark,
            blobs,
        }
    }

    fn reset(&mut self, name: &str, at: &Oid) {
        self.buf
            .extend_from_slice(format!("reset {name}\nfrom {at}\n\n").as_bytes());
        self.names.push(name.to_owned());
    }

    /// The end of a run: a question for every mark, then `done`.
    fn end(&mut self) {
        for ask in &self.asks {
            let line = match ask {
                Ask::Object(m) => format!("get-mark :{}\n", m.0),
                Ask::CommitAndTree(m) => format!("get-mark :{0}\nls :{0} \"\"\n", m.0),
            };
            self.buf.extend_from_slice(line.as_bytes());
        }
        self.buf.extend_from_slice(b"done\n");
    }

    /// The end of a run that must change nothing: every ref it named reset to nothing.
    fn abandon(&mut self) {
        for name in &self.names {
            self.buf
                .extend_from_slice(format!("reset {name}\n\n").as_bytes());
        }
        self.buf.extend_from_slice(b"done\n");
    }
}

impl<'g> Import<'g> {
    /// An import into `git`'s repository whose commits are dated `when`. With `early`,
    /// the process starts now when a turn for it is free (see `feed`); otherwise, or
    /// when none is, it starts at [`Import::finish`].
    pub fn new(git: &Git<'g>, when: i64, early: bool) -> Import<'g> {
        let started = early
            .then(feed::early_turn)
            .flatten()
            .and_then(|turn| Feed::start(command(git, true), ANSWER_CAP, turn).ok());
        Import {
            git: *git,
            stream: Stream::new(when),
            run: Some(started.map_or(Run::Later(Vec::new()), Run::Started)),
        }
    }

    /// Whether the process runs already.
    pub fn started(&self) -> bool {
        matches!(self.run, Some(Run::Started(_)))
    }

    /// Writes a blob of `bytes` and hands it over at once; its object is told at the end.
    pub fn blob(&mut self, bytes: Vec<u8>) -> Mark {
        let mark = self.stream.blob(bytes);
        self.hand_over();
        mark
    }

    /// Writes `commit` (its inline blobs first) at its ref; its object and tree are told
    /// at the end.
    pub fn commit(&mut self, commit: NewCommit) -> CommitMarks {
        let marks = self.stream.commit(commit);
        self.hand_over();
        marks
    }

    /// Creates the ref `name` at the existing commit `at` (refused if it exists).
    pub fn reset(&mut self, name: &str, at: &Oid) {
        self.stream.reset(name, at);
    }

    /// Hands what was written to the process, when it runs.
    fn hand_over(&mut self) {
        let pieces = self.stream.take();
        match &mut self.run {
            Some(Run::Started(feed)) => pieces.into_iter().for_each(|p| feed.send(p)),
            Some(Run::Later(held)) => held.extend(pieces),
            None => {}
        }
    }

    /// Ends the stream (asking for every mark's object and every commit's tree), waits
    /// for the process and reads its answers. The refs move only now.
    pub async fn finish(mut self) -> Result<Written, GitError> {
        self.stream.end();
        self.hand_over();
        let done = match self.run.take() {
            Some(Run::Started(feed)) => feed.end().await?,
            Some(Run::Later(pieces)) => {
                command(&self.git, false)
                    .stdin(pieces.concat())
                    .capture(ANSWER_CAP)
                    .await?
            }
            None => return Err(GitError::internal("fast-import was already finished")),
        };
        answers(&done.sink.bytes, &self.stream.asks)
    }
}

impl Import<'_> {
    /// Ends a run that must change nothing: every ref it named is reset to nothing and
    /// the process, if it runs, is waited for.
    pub async fn abandon(mut self) {
        if let Some(Run::Started(feed)) = self.run.take() {
            self.stream.abandon();
            for piece in self.stream.take() {
                feed.send(piece);
            }
            // Whatever it answers, it moved no ref.
            let _ = feed.end().await;
        }
    }
}

impl Drop for Import<'_> {
    /// An unfinished import that runs already is ended cleanly in the background: every
    /// ref it named is reset to nothing, so none moves, and the objects written stay
    /// unreferenced until git's own pruning removes them. (One dropped while it finishes
    /// is killed instead, with its call: see `feed`.)
    fn drop(&mut self) {
        if let Some(Run::Started(feed)) = self.run.take() {
            self.stream.abandon();
            feed.detach(self.stream.take());
        }
    }
}

fn command(git: &Git<'_>, early: bool) -> super::Command {
    // Started early, the run lasts through the caller's own work too.
    let stretch = if early { 2 } else { 1 };
    git.with_timeout(git.timeout.saturating_mul(stretch))
        .cmd(SETTINGS)
}

/// Reads the answers to `asks`: `get-mark` prints the object; `ls` its mode, type and
/// object, a tab, the path.
fn answers(out: &[u8], asks: &[Ask]) -> Result<Written, GitError> {
    let text = String::from_utf8_lossy(out);
    let mut lines = text.lines();
    let mut next_oid = |what: &str| {
        lines
            .next()
            .and_then(|l| {
                let field = l.split('\t').next()?.rsplit(' ').next()?;
                Oid::parse(field)
            })
            .ok_or_else(|| GitError::internal(format!("fast-import gave no {what}")))
    };
    let mut written = Written::default();
    for ask in asks {
        match ask {
            Ask::Object(m) => {
                written.objects.insert(*m, next_oid("blob")?);
            }
            Ask::CommitAndTree(m) => {
                written.objects.insert(*m, next_oid("commit")?);
                written.trees.insert(*m, next_oid("tree")?);
            }
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_whatever_bytes_they_hold() {
        let mut out = Vec::new();
        quoted("a \"b\"\\c\nd\te\u{7f}é".as_bytes(), &mut out);
        let mut raw = Vec::new();
        quoted(b"caf\xe9", &mut raw);
        assert_eq!(raw, b"\"caf\xe9\"", "any byte but NUL passes as it is");
        assert_eq!(out, "\"a \\\"b\\\"\\\\c\\nd\\011e\\177é\"".as_bytes());
    }

    fn sample(stream: &mut Stream) -> CommitMarks {
        let root = Oid::parse(&"1".repeat(40)).unwrap();
        let marks = stream.commit(NewCommit {
            ref_name: "refs/x/w".into(),
            message: "m\n".into(),
            root: Some(root.clone()),
            changes: vec![
                (b"gone".to_vec(), Change::Remove),
                (
                    b"new".to_vec(),
                    Change::Put {
                        mode: 0o100755,
                        content: Content::Bytes(b"hi".to_vec()),
                    },
                ),
                (
                    b"kept".to_vec(),
                    Change::Put {
                        mode: 0o100644,
                        content: Content::Object(root.clone()),
                    },
                ),
            ],
        });
        stream.reset("refs/x/h", &root);
        marks
    }

    #[test]
    fn blobs_are_marked_before_the_commits_that_use_them_and_every_mark_is_asked() {
        let mut stream = Stream::new(7);
        let marks = sample(&mut stream);
        assert_eq!(
            marks,
            CommitMarks {
                commit: Mark(2),
                blobs: vec![Mark(1)]
            }
        );
        stream.end();
        let pieces = stream.take();
        assert_eq!(pieces[1], b"hi", "a blob's bytes are a piece of their own");
        let ones = "1".repeat(40);
        let want = format!(
            "feature done\nfeature get-mark\nfeature ls\n\
             blob\nmark :1\ndata 2\nhi\n\
             commit refs/x/w\nmark :2\ncommitter gitward <gitward@localhost> 7 +0000\n\
             data 2\nm\n\nM 040000 {ones} \"\"\nD \"gone\"\nM 100755 :1 \"new\"\n\
             M 100644 {ones} \"kept\"\n\n\
             reset refs/x/h\nfrom {ones}\n\n\
             get-mark :1\nget-mark :2\nls :2 \"\"\ndone\n"
        );
        assert_eq!(String::from_utf8(pieces.concat()).unwrap(), want);
    }

    #[test]
    fn an_abandoned_stream_resets_every_ref_it_named() {
        let mut stream = Stream::new(7);
        sample(&mut stream);
        stream.take();
        stream.abandon();
        let end = String::from_utf8(stream.take().concat()).unwrap();
        assert_eq!(end, "reset refs/x/w\n\nreset refs/x/h\n\ndone\n");
    }

    #[test]
    fn answers_follow_the_questions() {
        let (a, b, c) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
        let out = format!("{a}\n{b}\n040000 tree {c}\t\n");
        let asks = [Ask::Object(Mark(1)), Ask::CommitAndTree(Mark(2))];
        let written = answers(out.as_bytes(), &asks).unwrap();
        assert_eq!(written.object(Mark(1)).unwrap().as_str(), a);
        assert_eq!(written.object(Mark(2)).unwrap().as_str(), b);
        assert_eq!(written.tree(Mark(2)).unwrap().as_str(), c);
        assert!(answers(a.as_bytes(), &asks).is_err(), "a missing answer");
    }
}
