//! Index entries with their stages (`git ls-files -z`), parsed by
//! `crate::parse::ls_files_unmerged`.

use super::index_lookup::Skipped;
use super::{Git, GitError, Oid};
use crate::parse::Records;
use crate::parse::ls_files_unmerged::{GITLINK, Stages};

/// The unmerged entries of the index (`ls-files -u`), at most `max` paths kept; the
/// total counts them all.
pub async fn unmerged(git: &Git<'_>, max: usize) -> Result<Stages, GitError> {
    let done = git
        .cmd(["ls-files", "-u", "-z"])
        .stream(Records::new(Stages::new(max)))
        .await?;
    Ok(done.sink.finish(true)?)
}

/// The gitlinks (submodule commits) of the index (`ls-files -s`), merged ones and
/// those in a conflict, at most `max` of each kept.
pub async fn gitlinks(git: &Git<'_>, max: usize) -> Result<Stages, GitError> {
    let done = git
        .cmd(["ls-files", "-s", "-z"])
        .stream(Records::new(Stages::new(max).only_mode(GITLINK)))
        .await?;
    Ok(done.sink.finish(true)?)
}

/// The tracked files whose bytes on disk differ from their index blob's only by git's
/// line-ending conversion (`ls-files --eol`: the index side and the worktree side end
/// their lines differently), so git counts them unchanged; `None` when the listing
/// passed its cap.
pub async fn converted(git: &Git<'_>) -> Result<Option<Vec<Vec<u8>>>, GitError> {
    let out = git
        .cmd(["ls-files", "-z", "--eol"])
        .capture(MAX_LISTING)
        .await?;
    if out.stopped_early || out.sink.truncated {
        return Ok(None);
    }
    Ok(Some(parse_converted(&out.sink.bytes)))
}

fn parse_converted(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for record in bytes.split(|b| *b == 0) {
        let Some(tab) = record.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let (info, path) = (&record[..tab], &record[tab + 1..]);
        let mut index = None;
        let mut worktree = None;
        for field in info.split(u8::is_ascii_whitespace) {
            if let Some(v) = field.strip_prefix(b"i/") {
                index = Some(v);
            } else if let Some(v) = field.strip_prefix(b"w/") {
                worktree = Some(v);
            }
        }
        if let (Some(i), Some(w)) = (index, worktree)
            && !i.is_empty()
            && !w.is_empty()
            && i != w
        {
            out.push(path.to_vec());
        }
    }
    out
}

/// The unconflicted skip-worktree entries of the index as git reads it, wherever each
/// lives (a split index keeps most entries in its shared index, which the index file
/// itself does not hold), and whether a `.gitattributes` file is tracked: `ls-files -t
/// --stage` tags each skip-worktree entry `S`.
pub async fn skipped(git: &Git<'_>) -> Result<(Vec<Skipped>, bool), GitError> {
    let out = git
        .cmd(["ls-files", "-t", "--stage", "-z"])
        .capture(super::DEFAULT_CAP * 16)
        .await?;
    if out.stopped_early || out.sink.truncated {
        return Err(GitError::Unsupported(
            "the index lists more entries than a restore point reads".into(),
        ));
    }
    Ok(parse_skipped(&out.sink.bytes))
}

fn parse_skipped(bytes: &[u8]) -> (Vec<Skipped>, bool) {
    let mut skipped = Vec::new();
    let mut attributes = false;
    for record in bytes.split(|b| *b == 0) {
        let Some(tab) = record.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let (info, path) = (&record[..tab], &record[tab + 1..]);
        attributes |= path == b".gitattributes" || path.ends_with(b"/.gitattributes");
        let info = String::from_utf8_lossy(info);
        if let [tag, mode, oid, stage] = info.split(' ').collect::<Vec<_>>().as_slice()
            && *tag == "S"
            && *stage == "0"
            && let Ok(mode) = u32::from_str_radix(mode, 8)
        {
            skipped.push(Skipped {
                path: path.to_vec(),
                mode,
                oid: Oid::parse(oid),
            });
        }
    }
    (skipped, attributes)
}

/// Every index entry (`ls-files --stage -z`) exactly as git prints it: mode, object,
/// stage and path of each, for a digest of the whole index.
pub async fn stages_raw(git: &Git<'_>) -> Result<Vec<u8>, GitError> {
    let out = git
        .cmd(["ls-files", "--stage", "-z"])
        .capture(super::DEFAULT_CAP * 16)
        .await?;
    Ok(out.sink.bytes)
}

/// The index entries of exactly `paths` (literal pathspecs), as `ls-files -s -z` prints
/// them, for a digest of what the index holds there.
pub async fn stages_raw_of(git: &Git<'_>, paths: &[String]) -> Result<Vec<u8>, GitError> {
    let out = git
        .cmd(["--literal-pathspecs", "ls-files", "-s", "-z", "--"])
        .args(paths)
        .capture(super::DEFAULT_CAP)
        .await?;
    Ok(out.sink.bytes)
}

/// A path whose worktree side may differ from its index entry, as [`worktree_changes`]
/// lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeChange {
    pub path: Vec<u8>,
    /// Not in the index (and not ignored).
    pub untracked: bool,
    /// The path's stage-0 index entry (mode, object) when it has one: a file whose bytes
    /// hash to it with the same mode has not changed, only its stat data.
    pub entry: Option<(u32, Oid)>,
}

/// The most output [`worktree_changes`] reads; a worktree with more is refused.
const MAX_LISTING: usize = super::DEFAULT_CAP * 4;

/// The paths whose worktree side may differ from the index, each once, never reading
/// HEAD: every tracked path `diff-files` reports (changed, deleted, in a conflict, or only
/// stat-dirty — git checks the entries' stat data on several threads and reads a file's
/// bytes only for a racily clean entry, so a caller compares the bytes of the others with
/// [`WorktreeChange::entry`]), beside every untracked non-ignored file (`ls-files -o
/// --exclude-standard`, each file listed). The two walks are independent and run side by
/// side. A submodule counts as changed when its checked-out commit differs, without
/// looking inside it. When more than `max` tracked paths are stat-dirty (an index not
/// refreshed since the files were touched), they are listed again by content (`ls-files
/// -m -d -u`, one thread), so only the paths whose bytes changed count against `max`.
/// `None` when a listing is larger than gitward reads.
pub async fn worktree_changes(
    git: &Git<'_>,
    max: usize,
) -> Result<Option<Vec<WorktreeChange>>, GitError> {
    let tracked = git
        .cmd([
            "diff-files",
            "-z",
            "--raw",
            "--no-renames",
            "--ignore-submodules=dirty",
        ])
        .capture(MAX_LISTING);
    let untracked = git
        .cmd(["ls-files", "-z", "-o", "--exclude-standard"])
        .capture(MAX_LISTING);
    let (tracked, untracked) = tokio::join!(tracked, untracked);
    let (tracked, untracked) = (tracked?, untracked?);
    if [&tracked, &untracked]
        .iter()
        .any(|out| out.stopped_early || out.sink.truncated)
    {
        return Ok(None);
    }
    let Some(mut out) = parse_raw(&tracked.sink.bytes) else {
        return Err(GitError::internal(
            "diff-files printed an unexpected record",
        ));
    };
    if out.len() > max {
        let by_content = git
            .cmd(["ls-files", "-z", "-t", "-m", "-d", "-u"])
            .capture(MAX_LISTING)
            .await?;
        if by_content.stopped_early || by_content.sink.truncated {
            return Ok(None);
        }
        out = parse_tracked(&by_content.sink.bytes);
    }
    out.extend(
        untracked
            .sink
            .bytes
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| WorktreeChange {
                path: p.to_vec(),
                untracked: true,
                entry: None,
            }),
    );
    Ok(Some(out))
}

/// `--raw -z` records of `diff-files`: `:srcmode dstmode srcoid dstoid status`, a NUL, the
/// path, a NUL. The source side is the index entry (all zeros for a path in a conflict or
/// added with intent). A path listed more than once is kept once.
fn parse_raw(bytes: &[u8]) -> Option<Vec<WorktreeChange>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut fields = bytes.split(|b| *b == 0);
    while let Some(head) = fields.next() {
        if head.is_empty() {
            continue;
        }
        let path = fields.next().filter(|p| !p.is_empty())?;
        let head = std::str::from_utf8(head.strip_prefix(b":")?).ok()?;
        let mut parts = head.split(' ');
        let mode = u32::from_str_radix(parts.next()?, 8).ok()?;
        let _ = parts.next()?;
        let oid = Oid::parse(parts.next()?)?;
        let entry = (mode != 0 && oid.as_str().bytes().any(|b| b != b'0')).then_some((mode, oid));
        if seen.insert(path) {
            out.push(WorktreeChange {
                path: path.to_vec(),
                untracked: false,
                entry,
            });
        }
    }
    Some(out)
}

/// `ls-files -t` records of index entries: a tag, a space, `mode object stage<TAB>` (`-u`
/// turns on the stage format), the path. A path in a conflict or both changed and deleted
/// comes more than once and is kept once. Its entry is left unknown: the path is stored.
fn parse_tracked(bytes: &[u8]) -> Vec<WorktreeChange> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for record in bytes.split(|b| *b == 0).filter(|r| r.len() > 2) {
        let rest = &record[2..];
        let path = match rest.iter().position(|b| *b == b'\t') {
            Some(tab) => &rest[tab + 1..],
            None => rest,
        };
        if seen.insert(path) {
            out.push(WorktreeChange {
                path: path.to_vec(),
                untracked: false,
                entry: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_records_parse_once_per_path_with_their_index_entry() {
        let (a, z) = ("a".repeat(40), "0".repeat(40));
        let raw = format!(
            ":100644 100644 {a} {z} M\0a.txt\0:100755 000000 {a} {z} D\0gone\0\
             :000000 000000 {z} {z} U\0both\tx\0:000000 000000 {z} {z} U\0both\tx\0"
        );
        let got = parse_raw(raw.as_bytes()).unwrap();
        let listed: Vec<(String, Option<u32>)> = got
            .iter()
            .map(|c| {
                let path = String::from_utf8_lossy(&c.path).into_owned();
                (path, c.entry.as_ref().map(|(m, _)| *m))
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("a.txt".to_owned(), Some(0o100644)),
                ("gone".to_owned(), Some(0o100755)),
                ("both\tx".to_owned(), None)
            ]
        );
        assert_eq!(got[0].entry.as_ref().unwrap().1.as_str(), a);
        assert!(parse_raw(b"garbage\0").is_none());
    }

    #[test]
    fn listing_records_parse_once_per_path() {
        let oid = "a".repeat(40);
        let raw = format!(
            "C 100644 {oid} 0\ta.txt\0R 100644 {oid} 0\tgone\0C 100644 {oid} 0\tgone\0\
             M 100644 {oid} 1\tboth\tx\0M 100644 {oid} 2\tboth\tx\0"
        );
        let got: Vec<String> = parse_tracked(raw.as_bytes())
            .iter()
            .map(|c| String::from_utf8_lossy(&c.path).into_owned())
            .collect();
        assert_eq!(got, ["a.txt", "gone", "both\tx"]);
    }
}

#[cfg(test)]
mod converted_tests {
    use super::parse_converted;

    #[test]
    fn only_files_whose_line_endings_differ_on_disk_are_listed() {
        let listed = b"i/lf    w/crlf  attr/text eol=crlf    \ta.txt\0\
i/lf    w/lf    attr/text eol=crlf    \tb.txt\0\
i/-text w/-text attr/-text            \tc.bin\0\
i/lf    w/      attr/                 \tgone.txt\0\
i/crlf  w/mixed attr/                 \td e.txt\0";
        assert_eq!(
            parse_converted(listed),
            vec![b"a.txt".to_vec(), b"d e.txt".to_vec()]
        );
    }
}
