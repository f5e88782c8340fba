//! The working tree part of `repo.brief`: one `status` read as it streams, so conflicts
//! and submodules are counted over every path while only a few paths are kept.

use std::path::Path;

use super::{Head, SubmoduleAttention, Submodules, TopPath, WorkingTree};
use crate::error::ToolError;
use crate::git::status::{IgnoreSubmodules, StatusQuery, Untracked};
use crate::git::{Git, gitconfig, head, stash};
use crate::model::{PathText, opt_name_text};
use crate::parse::status_v2::{self, Entry, Kind};
use crate::parse::{ParseError, RecordParser};
use crate::process::Flow;

/// Paths kept per class before the budget decides how many are shown.
const TOP_PATHS: usize = 8;
/// Submodules named in `attention` at most.
const ATTENTION: usize = 5;

/// HEAD, the working tree and the stash, from `status` (or from refs when bare).
pub(super) struct State {
    pub head: Head,
    /// Null in a bare repository.
    pub working_tree: Option<WorkingTree>,
    pub stashes: u64,
    pub submodules: Submodules,
}

pub(super) async fn read(git: &Git<'_>, worktree: Option<&Path>) -> Result<State, ToolError> {
    match worktree {
        Some(_) => read_worktree(git).await,
        None => read_bare(git).await,
    }
}

/// Status records, watched one at a time so conflicts and submodules are counted over
/// every path while only a few paths are kept.
struct BriefStatus {
    status: status_v2::Status,
    conflicted: Vec<Entry>,
    others: Vec<Entry>,
    subs: Submodules,
    /// Where the repository read sits under the top one (`sub/` for a nested submodule),
    /// so every submodule is named from the top.
    prefix: Vec<u8>,
}

impl BriefStatus {
    fn new(prefix: &[u8]) -> Self {
        BriefStatus {
            // Each entry is taken out as soon as it is complete, so one slot is enough.
            status: status_v2::Status::new(1),
            conflicted: Vec::new(),
            others: Vec::new(),
            subs: Submodules::default(),
            prefix: prefix.to_vec(),
        }
    }

    fn observe(&mut self, entry: Entry) {
        if entry.kind == Kind::Ignored {
            return;
        }
        if let Some(flags) = entry.submodule {
            let state = if entry.kind == Kind::Unmerged {
                self.subs.conflicts += 1;
                Some("conflicted")
            } else {
                self.subs.drifted += u64::from(flags.commit_changed);
                self.subs.modified += u64::from(flags.modified);
                self.subs.untracked += u64::from(flags.untracked);
                if flags.commit_changed {
                    Some("drifted")
                } else if flags.modified {
                    Some("modified")
                } else if flags.untracked {
                    Some("untracked")
                } else {
                    None
                }
            };
            if let Some(state) = state {
                let path = [self.prefix.as_slice(), &entry.path].concat();
                push_attention(&mut self.subs, PathText::from_bytes(&path), state);
            }
        }
        let list = if entry.kind == Kind::Unmerged {
            &mut self.conflicted
        } else {
            &mut self.others
        };
        if list.len() < TOP_PATHS {
            list.push(entry);
        }
    }
}

pub(super) fn push_attention(subs: &mut Submodules, path: PathText, state: &'static str) {
    if subs.attention.len() < ATTENTION {
        subs.attention.push(SubmoduleAttention { path, state });
    } else {
        subs.attention_truncated = true;
    }
}

impl RecordParser for BriefStatus {
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError> {
        let flow = self.status.record(record, offset)?;
        if let Some(entry) = self.status.entries.pop() {
            self.observe(entry);
        }
        Ok(flow)
    }

    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        self.status.finish(rest, offset)
    }
}

async fn read_worktree(git: &Git<'_>) -> Result<State, ToolError> {
    let query = StatusQuery {
        show_stash: true,
        ignore_submodules: Some(IgnoreSubmodules::None),
        untracked: Some(Untracked::Normal),
        ..StatusQuery::with_branch()
    };
    Ok(summarize(query.stream(git, BriefStatus::new(b"")).await?))
}

/// The flags of the submodules of a nested submodule (`prefix` is its path from the top
/// with a trailing `/`), counted as the top repository's are.
pub(super) async fn read_submodules(git: &Git<'_>, prefix: &[u8]) -> Result<Submodules, ToolError> {
    let query = StatusQuery {
        ignore_submodules: Some(IgnoreSubmodules::None),
        untracked: Some(Untracked::Normal),
        ..StatusQuery::default()
    };
    Ok(query.stream(git, BriefStatus::new(prefix)).await?.subs)
}

fn summarize(s: BriefStatus) -> State {
    let b = s.status.branch;
    let c = s.status.counts;
    let (branch, branch_bytes_b64) = opt_name_text(b.head.as_deref());
    let (upstream, upstream_bytes_b64) = opt_name_text(b.upstream.as_deref());
    let head = Head {
        detached: b.head.is_none(),
        unborn: b.oid.is_none(),
        sha: b.oid.map(|o| o.to_string()),
        branch,
        branch_bytes_b64,
        upstream,
        upstream_bytes_b64,
        ahead: b.ahead_behind.map(|(a, _)| a),
        behind: b.ahead_behind.map(|(_, b)| b),
        rebasing: false,
    };
    let changed = c.entries - c.ignored;
    let top_paths: Vec<TopPath> = s
        .conflicted
        .into_iter()
        .chain(s.others)
        .take(TOP_PATHS)
        .map(|e| TopPath {
            status: String::from_utf8_lossy(&e.xy).into_owned(),
            path: PathText::from_bytes(&e.path),
        })
        .collect();
    let tree = WorkingTree {
        clean: changed == 0,
        changed,
        staged: c.staged,
        unstaged: c.unstaged,
        untracked: c.untracked,
        conflicted: c.conflicted,
        renamed: c.renamed,
        top_paths_truncated: (top_paths.len() as u64) < changed,
        top_paths,
    };
    State {
        head,
        working_tree: Some(tree),
        stashes: b.stashes.unwrap_or(0),
        submodules: s.subs,
    }
}

/// HEAD of a bare repository, which `status` refuses to describe.
async fn read_bare(git: &Git<'_>) -> Result<State, ToolError> {
    let (name, oid, stashes) =
        tokio::try_join!(head::symbolic(git), git.head(), stash::count(git))?;
    let name = name.map(|n| match n.strip_prefix(b"refs/heads/") {
        Some(short) => short.to_vec(),
        None => n,
    });
    let (branch, branch_bytes_b64) = opt_name_text(name.as_deref());
    Ok(State {
        head: Head {
            detached: branch.is_none(),
            unborn: oid.is_none(),
            sha: oid.map(|o| o.to_string()),
            branch,
            branch_bytes_b64,
            upstream: None,
            upstream_bytes_b64: None,
            ahead: None,
            behind: None,
            rebasing: false,
        },
        working_tree: None,
        stashes,
        submodules: Submodules::default(),
    })
}

/// Submodule paths from `.gitmodules` (working trees only; a bare repository has none
/// checked out).
pub(super) async fn submodule_paths(
    git: &Git<'_>,
    worktree: Option<&Path>,
) -> Result<Vec<Vec<u8>>, ToolError> {
    let Some(top) = worktree else {
        return Ok(Vec::new());
    };
    // Like git, never through a symlink: it could name any file on the machine.
    let modules = std::fs::symlink_metadata(top.join(".gitmodules"));
    if !modules.is_ok_and(|m| m.is_file()) {
        return Ok(Vec::new());
    }
    Ok(gitconfig::gitmodules_paths(git).await?)
}

/// Adds the submodules `paths` names (from the `.gitmodules` of the repository at
/// `worktree`, which sits at `prefix` under the top) to the total, and those not checked
/// out to `uninitialized`.
pub(super) fn count_uninitialized(
    subs: &mut Submodules,
    worktree: Option<&Path>,
    prefix: &[u8],
    paths: &[Vec<u8>],
) {
    use std::os::unix::ffi::OsStrExt;
    subs.total += paths.len() as u64;
    let Some(top) = worktree else { return };
    for path in paths {
        let dir = top.join(std::ffi::OsStr::from_bytes(path));
        if !dir.join(".git").exists() {
            subs.uninitialized += 1;
            let full = [prefix, path].concat();
            push_attention(subs, PathText::from_bytes(&full), "uninitialized");
        }
    }
}
