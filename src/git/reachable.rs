//! Which commits no ref reaches any more, and which objects are gone altogether.

use std::collections::{HashMap, HashSet};

use super::{Git, GitError, Oid};
use crate::process::{Flow, Sink};

/// Output of the reachability walk read at most.
const REACH_CAP: usize = 8 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Reachable,
    /// Only a reflog still holds it; the object exists.
    Unreachable,
    /// The object no longer exists.
    Missing,
    /// The walk could not decide.
    Unknown,
}

/// Collects the object ids `rev-list` prints, one per line, until its cap.
struct OidLines {
    seen: HashSet<String>,
    wanted: HashSet<String>,
    pending: Vec<u8>,
    bytes: usize,
    capped: bool,
}

impl Sink for OidLines {
    fn accept(&mut self, chunk: &[u8]) -> Flow {
        self.bytes += chunk.len();
        for b in chunk {
            if *b == b'\n' {
                let line = String::from_utf8_lossy(&self.pending).into_owned();
                if self.wanted.contains(&line) {
                    self.seen.insert(line);
                }
                self.pending.clear();
            } else {
                self.pending.push(*b);
            }
        }
        if self.bytes > REACH_CAP {
            self.capped = true;
            return Flow::Enough;
        }
        Flow::More
    }
}

/// Which of `ids` are reachable from some ref (`--all`: every ref and every worktree's
/// HEAD), decided by one `rev-list <ids> --not --all`: it prints exactly the commits no
/// ref reaches. Missing objects are found with one `cat-file --batch-check`. The flag
/// is false when some id stayed undecided.
pub async fn from_refs(
    git: &Git<'_>,
    ids: &[&Oid],
) -> Result<(HashMap<Oid, Reach>, bool), GitError> {
    let mut ids: Vec<&Oid> = ids.iter().copied().filter(|o| !o.is_zero()).collect();
    ids.sort();
    ids.dedup();
    let mut result = HashMap::new();
    if ids.is_empty() {
        return Ok((result, true));
    }
    let stdin: Vec<u8> = ids
        .iter()
        .flat_map(|o| format!("{o}\n").into_bytes())
        .collect();
    let check = git
        .cmd(["cat-file", "--batch-check=%(objectname) %(objecttype)"])
        .stdin(stdin)
        .capture(1024 * 1024);
    let walk = git
        .cmd(["rev-list", "--ignore-missing"])
        .args(ids.iter().map(|o| o.to_string()))
        .args(["--not", "--all", "--"])
        .stream_allowing(
            OidLines {
                seen: HashSet::new(),
                wanted: ids.iter().map(|o| o.to_string()).collect(),
                pending: Vec::new(),
                bytes: 0,
                capped: false,
            },
            &[0, 128],
        );
    let (check, walk) = tokio::try_join!(check, walk)?;
    let missing: HashSet<String> = String::from_utf8_lossy(&check.sink.bytes)
        .lines()
        .filter_map(|l| l.strip_suffix(" missing"))
        .map(str::to_owned)
        .collect();
    // A failed walk (a non-commit object among the ids, say) decides nothing.
    let walked = walk.code == Some(0) || walk.stopped_early;
    let complete = walk.code == Some(0) && !walk.sink.capped;
    for id in ids {
        let text = id.to_string();
        let state = if missing.contains(&text) {
            Reach::Missing
        } else if !walked {
            Reach::Unknown
        } else if walk.sink.seen.contains(&text) {
            Reach::Unreachable
        } else if complete {
            Reach::Reachable
        } else {
            Reach::Unknown
        };
        result.insert(id.clone(), state);
    }
    let all_decided = result.values().all(|r| *r != Reach::Unknown);
    Ok((result, all_decided))
}
