//! The rebase half of `repo.conflictPreflight`: the commits `git rebase` would pick,
//! replayed one by one until the first conflict.

use super::{ConflictCommit, PreflightData, RebaseReport, Sides, fill, merge};
use crate::error::ToolError;
use crate::git::merge::Scratch;
use crate::git::{Git, ObjectFormat, Oid, Repo, log};

/// Commits a rebase prediction replays at most.
const MAX_REBASE_COMMITS: usize = 100;

pub(super) async fn rebase(
    git: &Git<'_>,
    scratch: &Scratch,
    repo: &Repo,
    sides: Sides<'_>,
    data: &mut PreflightData,
) -> Result<(), ToolError> {
    let log = log::rebase_picks(git, sides.target, sides.current, MAX_REBASE_COMMITS).await?;
    let empty = empty_tree(repo.object_format);
    let mut onto = sides.target.clone();
    let mut report = RebaseReport {
        commits_total: log.seen,
        commits_replayed: 0,
        commits_truncated: log.seen > log.commits.len() as u64,
        first_conflict: None,
    };
    for (i, commit) in log.commits.iter().enumerate() {
        let parent = commit.parents.first().map_or(empty, Oid::as_str);
        let merged = merge(git, scratch, Some(parent), &onto, &commit.oid, sides.max).await?;
        report.commits_replayed += 1;
        fill(data, &merged);
        if data.status == "conflicts" {
            report.first_conflict = Some(ConflictCommit {
                oid: commit.oid.to_string(),
                subject: commit.subject.clone(),
                position: i as u64 + 1,
            });
            break;
        }
        onto = merged.tree_oid()?.clone();
    }
    data.guidance = guidance(&report);
    if report.first_conflict.is_none() && report.commits_truncated {
        data.status = "undetermined";
    }
    data.rebase = Some(report);
    Ok(())
}

fn guidance(report: &RebaseReport) -> String {
    match (&report.first_conflict, report.commits_truncated) {
        (Some(c), _) => format!(
            "git rebase would stop at commit {} of {} (\"{}\") with these conflicts. During the rebase, \"ours\" is the target side and \"theirs\" the replayed commit.",
            c.position, report.commits_total, c.subject
        ),
        (None, true) => format!(
            "The first {} of {} commits replay cleanly; the rest were not checked. The rebase may still stop on a later commit.",
            report.commits_replayed, report.commits_total
        ),
        (None, false) => format!(
            "All {} commits would replay without conflicts. Propose it with operation.preview.rebase.",
            report.commits_total
        ),
    }
}

/// The id of the empty tree, which git knows without storing it.
fn empty_tree(format: ObjectFormat) -> &'static str {
    match format {
        ObjectFormat::Sha1 => "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ObjectFormat::Sha256 => "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guidance_names_the_stopping_commit_or_what_was_left_unchecked() {
        let mut report = RebaseReport {
            commits_total: 3,
            commits_replayed: 2,
            commits_truncated: false,
            first_conflict: Some(ConflictCommit {
                oid: "x".into(),
                subject: "fix".into(),
                position: 2,
            }),
        };
        assert!(guidance(&report).starts_with("git rebase would stop at commit 2 of 3 (\"fix\")"));
        report.first_conflict = None;
        report.commits_truncated = true;
        assert!(guidance(&report).starts_with("The first 2 of 3 commits replay cleanly"));
    }
}
