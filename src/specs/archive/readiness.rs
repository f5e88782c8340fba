//! What would keep an archive from finishing, found before OpenSpec runs.
//!
//! The OpenSpec archive cannot be taken back, so whatever would stop the git finalization
//! after it is checked first: the preview lists it, and a confirm that meets it stops
//! before anything is written. The rule behind it, which the apply instruction gives the
//! agent: the implementation is committed on the branch of the change's worktree as the
//! work goes; the archive itself commits only the change's own OpenSpec paths. So any
//! other uncommitted path in that worktree blocks (it would be stranded: never merged,
//! and the worktree could not be removed), and in linked mode so does an uncommitted
//! path in main that the fast-forward would overwrite, or any uncommitted path in main
//! once main has moved on (the proposal is only rebased with clean trees).

use std::path::Path;

use serde_json::{Value, json};

use super::changed_paths;
use crate::config::Config;
use crate::git::diff::{DiffQuery, Sides};
use crate::git::{Git, head, merge_base, repo};
use crate::process::CancellationToken;
use crate::specs::target::{Mode, Owner, Target};

/// The finalization's view of the trees before the archive.
pub(super) struct Readiness {
    /// Every uncommitted path of the change's worktree, the change's own included.
    pub uncommitted: Vec<String>,
    /// Each condition that would stop the finalization: `{code, message, paths, hint}`.
    pub blockers: Vec<Value>,
}

impl Readiness {
    pub fn state(&self) -> Value {
        json!({ "uncommittedPaths": self.uncommitted, "blockers": self.blockers })
    }
}

/// Whether `path` (relative to the worktree) is the change's own OpenSpec work, which the
/// archive commits itself.
pub(super) fn own_path(name: &str, path: &str) -> bool {
    let change = format!("openspec/changes/{name}");
    path == change
        || path.starts_with(&format!("{change}/"))
        || path == "openspec/config.yaml"
        || path == "openspec/config.yml"
}

/// The trees' readiness for the change `target` with delta specs `deltas`.
pub(super) async fn check(
    config: &Config,
    owner: &Owner,
    target: &Target,
    deltas: &[String],
    cancel: &CancellationToken,
) -> Readiness {
    let mut out = Readiness {
        uncommitted: Vec::new(),
        blockers: Vec::new(),
    };
    if !owner.is_git() {
        return out;
    }
    let name = target.proposal_ref.change_id.as_str();
    let ws = target.path();
    out.uncommitted = changed_paths(config, ws, None, cancel)
        .await
        .unwrap_or_default();
    let stranded: Vec<String> = out
        .uncommitted
        .iter()
        .filter(|p| !own_path(name, p))
        .cloned()
        .collect();
    let branch = match target.worktree_mode {
        Mode::Linked => format!("proposal/{name}"),
        Mode::Main => "the current branch".to_owned(),
    };
    if !stranded.is_empty() {
        out.blockers.push(json!({
            "code": "uncommitted-work",
            "message": format!(
                "{} has uncommitted paths outside the change's OpenSpec folder; the archive commits only its own paths, so these would never reach main",
                ws.display()
            ),
            "paths": stranded,
            "hint": format!(
                "Commit the change's implementation on {branch} in {} (git add and git commit there), and ask the user about any path that is not part of this change; then preview again.",
                ws.display()
            ),
        }));
    }
    if target.worktree_mode == Mode::Linked {
        let incoming = Incoming {
            name,
            deltas,
            uncommitted: &out.uncommitted,
        };
        if let Some(b) = main_blocker(config, owner, ws, &incoming, cancel).await {
            out.blockers.push(b);
        }
    }
    out
}

/// What the change's worktree holds beyond its branch's commits.
struct Incoming<'a> {
    name: &'a str,
    deltas: &'a [String],
    uncommitted: &'a [String],
}

/// Linked mode: uncommitted paths in main that the fast-forward would overwrite, or any
/// at all once main has moved on.
async fn main_blocker(
    config: &Config,
    owner: &Owner,
    ws: &Path,
    work: &Incoming<'_>,
    cancel: &CancellationToken,
) -> Option<Value> {
    let main = owner.path.as_path();
    let dirty = changed_paths(config, main, None, cancel)
        .await
        .unwrap_or_default();
    if dirty.is_empty() {
        return None;
    }
    let main_repo = repo::open(config, "folderPath", &main.to_string_lossy(), cancel)
        .await
        .ok()?;
    let ws_repo = repo::open(config, "worktree", &ws.to_string_lossy(), cancel)
        .await
        .ok()?;
    let main_git = Git::new(&main_repo, cancel);
    let ws_git = Git::new(&ws_repo, cancel);
    let main_head = main_git.head().await.ok().flatten()?;
    let ws_head = ws_git.head().await.ok().flatten()?;
    let base = merge_base::of(&ws_git, &main_head, &ws_head)
        .await
        .ok()
        .flatten()?;
    let moved_on = base != main_head;
    // What the merge brings into main: the proposal's commits, its uncommitted work (which
    // the archive or the agent commits), and the archive's own new paths.
    let sides = Sides::Trees(base, ws_head);
    let committed = DiffQuery {
        sides: &sides,
        path: None,
    }
    .names(&ws_git, &ws_repo)
    .await
    .unwrap_or_default();
    let mut incoming: Vec<String> = committed
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .chain(work.uncommitted.iter().cloned())
        .collect();
    incoming.push(format!(
        "openspec/changes/archive/{}-{}",
        crate::specs::local_date(),
        work.name
    ));
    incoming.extend(
        work.deltas
            .iter()
            .map(|c| format!("openspec/specs/{c}/spec.md")),
    );
    let overlap: Vec<String> = dirty
        .iter()
        .filter(|d| {
            incoming.iter().any(|i| {
                i == *d || i.starts_with(&format!("{d}/")) || d.starts_with(&format!("{i}/"))
            })
        })
        .cloned()
        .collect();
    let main_branch = head::symbolic_text(&main_git)
        .await
        .ok()
        .flatten()
        .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_owned))
        .unwrap_or_else(|| "main".into());
    let (paths, why) = if moved_on {
        (
            dirty,
            format!(
                "{main_branch} has moved on, so the proposal must be rebased before the fast-forward, and that only runs while main has no uncommitted changes"
            ),
        )
    } else if !overlap.is_empty() {
        (
            overlap,
            "the fast-forward would overwrite these uncommitted paths in main".to_owned(),
        )
    } else {
        return None;
    };
    Some(json!({
        "code": "main-dirty",
        "message": format!("{}: {why}", main.display()),
        "paths": paths,
        "hint": "Ask the user how to protect these uncommitted changes in main (commit or stash them); never discard them. Then preview again.",
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_folder_and_the_config_are_its_own() {
        for own in [
            "openspec/changes/one",
            "openspec/changes/one/tasks.md",
            "openspec/config.yaml",
        ] {
            assert!(own_path("one", own), "{own}");
        }
        for other in [
            "openspec/changes/one-two/tasks.md",
            "openspec/specs/greeting/spec.md",
            "hello.sh",
            "README.md",
        ] {
            assert!(!own_path("one", other), "{other}");
        }
    }
}
