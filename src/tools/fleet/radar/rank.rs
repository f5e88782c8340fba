//! A repository's status, priority, summary and next tools, from what was found in it.

use super::entry::{Entry, RepoStatus, Suggestion};

/// Status, priority, summary and suggestions from what was found.
pub(super) fn rank(e: &mut Entry) {
    let status = status_of(e);
    e.summary = summary(e, status);
    e.suggested_actions = suggestions(status);
    e.priority = status.priority();
    e.status = status;
}

/// The most urgent thing that is true of the repository.
fn status_of(e: &Entry) -> RepoStatus {
    use RepoStatus::*;
    if e.error.is_some() {
        Unknown
    } else if e.conflict_active {
        Conflict
    } else if e.potential_conflict_active {
        PotentialConflict
    } else if matches!((e.ahead, e.behind), (Some(a), Some(b)) if a > 0 && b > 0) {
        Divergent
    } else if e.operation == Some("bisect") {
        Bisecting
    } else if e.dirty || e.operation.is_some() {
        LocalChanges
    } else if e.behind.is_some_and(|b| b > 0) {
        Behind
    } else if e.ahead.is_some_and(|a| a > 0) {
        Ahead
    } else if e.ahead.is_none() {
        NoUpstream
    } else {
        Clean
    }
}

fn summary(e: &Entry, status: RepoStatus) -> String {
    use RepoStatus::*;
    let upstream = e.upstream.clone().unwrap_or_default();
    let (a, b) = (e.ahead.unwrap_or(0), e.behind.unwrap_or(0));
    let plural = |n: u64, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    match status {
        Unknown => format!(
            "cannot be inspected: {}",
            e.error.as_deref().unwrap_or_default()
        ),
        Conflict => format!(
            "{} during {}",
            plural(e.conflicted_files, "conflicted path", "conflicted paths"),
            e.conflict_operation.unwrap_or("merge")
        ),
        PotentialConflict => format!(
            "diverged from {upstream} ({a} ahead, {b} behind); merging it would conflict in {}",
            plural(e.potential_conflict_count, "path", "paths")
        ),
        Divergent => format!("diverged from {upstream} ({a} ahead, {b} behind)"),
        Bisecting => {
            let b = e.bisect.as_ref();
            let short = |o: &String| o.get(..7).unwrap_or(o).to_owned();
            let mut text = format!(
                "bisecting at {}: bad {}, {}",
                e.short_head.as_deref().unwrap_or("?"),
                b.and_then(|b| b.bad.as_ref())
                    .map_or_else(|| "not marked".to_owned(), short),
                plural(
                    b.map_or(0, |b| b.good.len() as u64),
                    "good commit",
                    "good commits"
                )
            );
            if e.changed_files > 0 {
                text.push_str(&format!(
                    "; {}",
                    plural(e.changed_files, "changed file", "changed files")
                ));
            }
            text
        }
        LocalChanges => match (e.operation, e.changed_files) {
            (Some(op), 0) => format!("{op} in progress"),
            (Some(op), n) => format!(
                "{op} in progress; {}",
                plural(n, "changed file", "changed files")
            ),
            (None, n) => plural(n, "changed file", "changed files"),
        },
        Behind => format!("behind {upstream} by {}", plural(b, "commit", "commits")),
        Ahead => format!("ahead of {upstream} by {}", plural(a, "commit", "commits")),
        NoUpstream => match (&e.branch, &e.short_head, e.has_upstream) {
            (Some(branch), _, true) => format!("upstream {upstream} of {branch} is gone"),
            (Some(branch), _, false) => format!("{branch} has no upstream"),
            (None, Some(head), _) => format!("detached HEAD at {head}"),
            (None, None, _) => "no commits yet".to_owned(),
        },
        Clean => format!("clean and up to date with {upstream}"),
    }
}

/// The tools to call next, most useful first.
fn suggestions(status: RepoStatus) -> Vec<Suggestion> {
    use RepoStatus::*;
    let s = |tool, reason| Suggestion { tool, reason };
    match status {
        Unknown => vec![s(
            "repo.status",
            "retry on this repository alone to see the full error",
        )],
        Conflict => vec![
            s(
                "conflict.read",
                "read the conflicted files with base, ours and theirs",
            ),
            s("repo.status", "see every path of the working tree"),
        ],
        PotentialConflict => vec![
            s(
                "repo.conflictPreflight",
                "see which paths would conflict with the upstream",
            ),
            s("repo.branchStack", "compare the branch with its upstream"),
        ],
        Divergent => vec![
            s("repo.branchStack", "compare the branch with its upstream"),
            s(
                "repo.conflictPreflight",
                "check that merging or rebasing is clean",
            ),
        ],
        Bisecting => vec![
            s(
                "repo.history",
                "read the commits left between the good and bad marks",
            ),
            s("commit.details", "inspect the commit under test (HEAD)"),
        ],
        LocalChanges => vec![
            s("worktree.changes", "summarise the uncommitted changes"),
            s("diff.text", "read the uncommitted changes"),
        ],
        Behind => vec![
            s("repo.branchStack", "see the upstream commits not yet here"),
            s(
                "operation.preview.merge",
                "propose bringing the branch up to date",
            ),
        ],
        Ahead => vec![
            s("repo.history", "review the commits not yet pushed"),
            s("operation.preview.push", "propose pushing them"),
        ],
        NoUpstream => vec![s(
            "repo.branchStack",
            "see how the branch relates to others",
        )],
        Clean => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_follow_the_contract() {
        use RepoStatus::*;
        let order = [
            Conflict,
            PotentialConflict,
            Divergent,
            Bisecting,
            LocalChanges,
            Behind,
            Ahead,
            NoUpstream,
            Unknown,
            Clean,
        ];
        let p: Vec<u8> = order.iter().map(|s| s.priority()).collect();
        assert_eq!(p, [100, 95, 90, 85, 80, 70, 60, 40, 10, 0]);
    }

    #[test]
    fn divergence_outranks_local_changes() {
        let mut e = Entry {
            dirty: true,
            changed_files: 2,
            ahead: Some(1),
            behind: Some(2),
            has_upstream: true,
            upstream: Some("origin/main".into()),
            branch: Some("main".into()),
            ..Entry::default()
        };
        rank(&mut e);
        assert_eq!(e.status, RepoStatus::Divergent);
        assert_eq!(e.summary, "diverged from origin/main (1 ahead, 2 behind)");
    }
}
