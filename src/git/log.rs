//! Commit walks: `git log` pages, one commit's message, author counts over a window,
//! ahead/behind between two commits, the commits one side has and the other lacks, the
//! commits a rebase would pick, subjects by id and the time of the last commit.

use std::collections::HashMap;
use std::ffi::OsString;

use super::{Git, GitError, Oid, RepoRelPath};
use crate::parse::Records;
use crate::parse::author_emails::{self, AuthorEmails};
use crate::parse::log::{self, Log};
use crate::process::Capped;

/// Where a walk starts.
#[derive(Debug, Clone, Copy)]
pub enum Start<'a> {
    /// HEAD, which may be an unborn branch: the walk is then empty, not an error.
    Head,
    /// A commit already resolved.
    Commit(&'a Oid),
}

impl Start<'_> {
    fn arg(&self) -> OsString {
        match self {
            Start::Head => "HEAD".into(),
            Start::Commit(oid) => oid.as_str().into(),
        }
    }

    /// Exit codes that still mean "an answer": 128 is an unborn HEAD.
    fn ok_codes(&self) -> &'static [i32] {
        match self {
            Start::Head => &[0, 128],
            Start::Commit(_) => &[0],
        }
    }
}

/// A page of `git log` in the [`log`] parser's format.
#[derive(Debug, Clone, Copy)]
pub struct LogQuery<'a> {
    pub start: Start<'a>,
    /// Commits git prints at most.
    pub max_count: u64,
    /// Commits skipped first.
    pub skip: u64,
    /// Only commits touching these paths (literal pathspecs).
    pub paths: &'a [RepoRelPath],
}

impl<'a> LogQuery<'a> {
    pub fn new(start: Start<'a>, max_count: u64) -> Self {
        LogQuery {
            start,
            max_count,
            skip: 0,
            paths: &[],
        }
    }

    pub fn argv(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--literal-pathspecs".into(),
            "log".into(),
            "-z".into(),
            log::format().into(),
            format!("--max-count={}", self.max_count).into(),
        ];
        if self.skip > 0 {
            args.push(format!("--skip={}", self.skip).into());
        }
        args.extend(["--end-of-options".into(), self.start.arg(), "--".into()]);
        args.extend(self.paths.iter().map(|p| OsString::from(p.as_str())));
        args
    }

    /// The first `keep` commits (all are counted in `seen`); `None` when the walk starts
    /// at an unborn HEAD.
    pub async fn read(&self, git: &Git<'_>, keep: usize) -> Result<Option<Log>, GitError> {
        let done = git
            .cmd(self.argv())
            .stream_allowing(Records::new(Log::new(keep)), self.start.ok_codes())
            .await?;
        if done.code == Some(128) {
            return Ok(None);
        }
        Ok(Some(done.sink.finish(true)?))
    }
}

/// The whole message of `commit` as written (`%B`; `%s` would fold a multi-line first
/// paragraph), at most `cap` bytes.
pub async fn message(git: &Git<'_>, commit: &Oid, cap: usize) -> Result<Capped, GitError> {
    let out = git
        .cmd([
            "log",
            "--max-count=1",
            "--format=%B",
            "--end-of-options",
            commit.as_str(),
            "--",
        ])
        .capture(cap)
        .await?;
    Ok(out.sink)
}

/// Commits reachable from HEAD since `since` (Unix seconds, committer time) touching
/// `path`, with their distinct author emails, counted up to `cap` commits. Zero on an
/// unborn HEAD.
pub async fn authors_since(
    git: &Git<'_>,
    since: i64,
    path: &RepoRelPath,
    cap: u64,
) -> Result<AuthorEmails, GitError> {
    let done = git
        .cmd([
            "--literal-pathspecs",
            "log",
            "-z",
            author_emails::FORMAT,
            &format!("--since=@{since}"),
            "HEAD",
            "--",
            path.as_str(),
        ])
        .stream_allowing(AuthorEmails::new(cap), &[0, 128])
        .await?;
    if done.code == Some(128) {
        return Ok(AuthorEmails::new(cap));
    }
    Ok(done.sink.finish())
}

/// `(commits only on a, commits only on b)`: `rev-list --left-right --count a...b`.
pub async fn left_right(git: &Git<'_>, a: &Oid, b: &Oid) -> Result<(u64, u64), GitError> {
    let out = git
        .cmd([
            "rev-list",
            "--left-right",
            "--count",
            &format!("{a}...{b}"),
            "--",
        ])
        .capture(4096)
        .await?;
    let text = String::from_utf8_lossy(&out.sink.bytes);
    let mut it = text
        .split_whitespace()
        .map(|n| n.parse::<u64>().unwrap_or(0));
    Ok((it.next().unwrap_or(0), it.next().unwrap_or(0)))
}

/// What a walk from one commit leaves out.
#[derive(Debug, Clone, Copy)]
pub enum Hide<'a> {
    /// Everything reachable from this commit (`^<oid>`).
    Commit(&'a Oid),
    /// Everything reachable from a remote's remote-tracking branches
    /// (`--not --remotes=<name>`); the name is a validated remote name.
    Remote(&'a str),
}

/// The commits reachable from `tip` and not hidden by `hide`, newest first: at most
/// `keep` kept, and all of them counted in `seen` unless `limit` stops the walk earlier
/// (a caller asking one more than it keeps learns whether some were left out).
pub async fn only_in(
    git: &Git<'_>,
    tip: &Oid,
    hide: Hide<'_>,
    keep: usize,
    limit: Option<u64>,
) -> Result<Log, GitError> {
    let mut args: Vec<OsString> = vec!["log".into(), "-z".into(), log::format().into()];
    args.extend(limit.map(|n| format!("--max-count={n}").into()));
    args.push(tip.as_str().into());
    match hide {
        Hide::Commit(oid) => args.push(format!("^{oid}").into()),
        Hide::Remote(name) => args.extend(["--not".into(), format!("--remotes={name}").into()]),
    }
    args.push("--".into());
    let done = git.cmd(args).stream(Records::new(Log::new(keep))).await?;
    Ok(done.sink.finish(true)?)
}

/// The commits `git rebase <upstream>` would pick from `branch`: its non-merge commits not
/// already in `upstream` (compared by patch id), in the sequencer's order (graph order,
/// oldest first); at most `max` kept, every one counted in `seen`.
pub async fn rebase_picks(
    git: &Git<'_>,
    upstream: &Oid,
    branch: &Oid,
    max: usize,
) -> Result<Log, GitError> {
    let range = format!("{upstream}...{branch}");
    let done = git
        .cmd([
            "log",
            "-z",
            "--reverse",
            "--topo-order",
            "--no-merges",
            "--right-only",
            "--cherry-pick",
            &log::format(),
            &range,
        ])
        .stream(Records::new(Log::new(max)))
        .await?;
    Ok(done.sink.finish(true)?)
}

/// Each commit's subject, by id; no process runs for an empty list.
pub async fn subjects(git: &Git<'_>, oids: &[&Oid]) -> Result<HashMap<Oid, String>, GitError> {
    if oids.is_empty() {
        return Ok(HashMap::new());
    }
    let done = git
        .cmd(["log", "-z", "--no-walk=unsorted", &log::format()])
        .args(oids.iter().map(|o| o.as_str()))
        .stream(Records::new(Log::new(oids.len())))
        .await?;
    let log = done.sink.finish(true)?;
    Ok(log
        .commits
        .into_iter()
        .map(|c| (c.oid, c.subject))
        .collect())
}

/// HEAD's committer time in Unix seconds; `None` on an unborn branch.
pub async fn head_time(git: &Git<'_>) -> Result<Option<i64>, GitError> {
    // An unborn branch has no commit: exit 128, no output.
    let last = git
        .cmd(["log", "-1", "--format=%ct"])
        .capture_allowing(64, &[0, 128])
        .await?;
    Ok(last
        .success()
        .then(|| {
            String::from_utf8_lossy(&last.sink.bytes)
                .trim()
                .parse()
                .ok()
        })
        .flatten())
}

/// The `encoding` header of each of `commits` that has one (git writes it when
/// `i18n.commitEncoding` is not UTF-8). Commits that do not exist are left out.
pub async fn encodings(
    git: &Git<'_>,
    commits: &[&Oid],
) -> Result<std::collections::HashMap<Oid, String>, GitError> {
    let mut out = std::collections::HashMap::new();
    if commits.is_empty() {
        return Ok(out);
    }
    let done = git
        .cmd([
            "log",
            "--no-walk=unsorted",
            "-z",
            "--format=%H %e",
            "--end-of-options",
        ])
        .args(commits.iter().map(|o| o.as_str()))
        .arg("--")
        .capture_allowing(64 * (commits.len() + 1), &[0, 128])
        .await?;
    if !done.success() {
        return Ok(out);
    }
    for record in done.sink.bytes.split(|b| *b == 0) {
        let text = String::from_utf8_lossy(record);
        if let Some((oid, enc)) = text.trim().split_once(' ')
            && let Some(oid) = Oid::parse(oid)
            && !enc.trim().is_empty()
        {
            out.insert(oid, enc.trim().to_owned());
        }
    }
    Ok(out)
}

/// The parents of the commit `oid`, in order; `None` when there is no such commit.
pub async fn parents(git: &Git<'_>, oid: &Oid) -> Result<Option<Vec<Oid>>, GitError> {
    let out = git
        .cmd([
            "rev-list",
            "--parents",
            "-n",
            "1",
            "--end-of-options",
            oid.as_str(),
        ])
        .capture_allowing(4096, &[0, 128])
        .await?;
    if !out.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.sink.bytes);
    Ok(Some(
        text.split_whitespace()
            .skip(1)
            .filter_map(Oid::parse)
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(q: LogQuery<'_>) -> String {
        q.argv()
            .iter()
            .skip(3)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn start_and_paths_never_read_as_options() {
        let oid = Oid::parse(&"ab".repeat(20)).unwrap();
        let paths = [RepoRelPath::parse("path", "-p").unwrap()];
        let q = LogQuery {
            skip: 50,
            paths: &paths,
            ..LogQuery::new(Start::Commit(&oid), 51)
        };
        assert_eq!(
            shown(q).split_once(' ').unwrap().1,
            format!("--max-count=51 --skip=50 --end-of-options {oid} -- -p")
        );
        assert_eq!(
            shown(LogQuery::new(Start::Head, 10))
                .split_once(' ')
                .unwrap()
                .1,
            "--max-count=10 --end-of-options HEAD --"
        );
    }
}
