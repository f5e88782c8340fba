//! Risk, summary, guidance and next tools of `repo.branchStack`, from the numbers alone.

use super::{BranchStackData, Suggested};

/// Risk, summary, guidance and next tools from the numbers.
pub(super) fn assess(d: &mut BranchStackData, on_candidate: bool) {
    let c = &d.current;
    let mut risk = 0;
    let mut summary = Vec::new();
    let mut guidance = Vec::new();
    let mut actions = Vec::new();
    if c.unborn {
        summary.push(format!("{} has no commits yet", c.label));
        guidance.push("Nothing to compare until the first commit exists.".to_owned());
    } else if c.detached {
        summary.push("HEAD is detached".to_owned());
        guidance.push(
            "Commits made on a detached HEAD belong to no branch; propose a branch before building on it."
                .to_owned(),
        );
        risk = risk.max(1);
    } else {
        summary.push(format!("On {}", c.label));
    }
    match (&d.upstream, c.ahead, c.behind) {
        (Some(u), _, _) if u.gone => {
            summary.push(format!("upstream {} is gone", u.label));
            guidance.push(
                "The upstream branch was deleted on the remote (as of the last fetch).".to_owned(),
            );
            risk = risk.max(1);
        }
        (Some(u), Some(a), Some(b)) => {
            summary.push(format!("{a} ahead / {b} behind {}", u.label));
            if a > 0 && b > 0 {
                risk = risk.max(2);
                guidance.push(format!(
                    "Diverged from {}: integrating needs a merge or rebase.",
                    u.label
                ));
                actions.push(Suggested {
                    tool: "repo.conflictPreflight",
                    reason: format!(
                        "Predict conflicts with {} before proposing a merge or rebase.",
                        u.label
                    ),
                });
            } else if b > 0 {
                risk = risk.max(1);
                guidance.push(format!("Behind {}: a fast-forward is possible.", u.label));
            }
        }
        _ if !c.unborn && !c.detached => summary.push("no upstream".to_owned()),
        _ => {}
    }
    if let Some(base) = &d.base {
        if let Some(dist) = &base.distance {
            summary.push(format!(
                "{} ahead / {} behind base {}",
                dist.ahead_from_base, dist.behind_base, base.label
            ));
            if dist.behind_base > 0 {
                risk = risk.max(if dist.behind_base > 50 { 2 } else { 1 });
                actions.push(Suggested {
                    tool: "repo.conflictPreflight",
                    reason: format!(
                        "Check whether {} merges cleanly into this branch.",
                        base.label
                    ),
                });
            }
        }
    } else if on_candidate {
        guidance.push(
            "The current branch is itself a base candidate and no other candidate exists."
                .to_owned(),
        );
    } else {
        guidance.push("No base branch found among baseCandidates.".to_owned());
    }
    let descendants = d
        .related
        .iter()
        .filter(|r| r.relation == "descends-from-current")
        .count();
    if descendants > 0 {
        guidance.push(format!(
            "{descendants} branch(es) build on this one: rewriting it (rebase, amend, reset) would strand them."
        ));
        risk = risk.max(1);
    }
    actions.push(Suggested {
        tool: "repo.history",
        reason: "See the commits on this branch.".to_owned(),
    });
    actions.dedup_by_key(|a| a.tool);
    d.risk = ["low", "medium", "high"][risk];
    d.summary = summary.join("; ") + ".";
    d.guidance = guidance;
    d.suggested_actions = actions;
}

#[cfg(test)]
mod tests {
    use super::super::{Base, Current, Distance, RefPoint};
    use super::*;

    fn data(ahead: u64, behind: u64, behind_base: u64) -> BranchStackData {
        BranchStackData {
            current: Current {
                ref_name: Some("refs/heads/feat".into()),
                ref_bytes_b64: None,
                label: "feat".into(),
                commit: Some("c".into()),
                detached: false,
                unborn: false,
                ahead: Some(ahead),
                behind: Some(behind),
            },
            upstream: Some(RefPoint {
                ref_name: "refs/remotes/origin/feat".into(),
                label: "origin/feat".into(),
                commit: Some("u".into()),
                gone: false,
            }),
            base: Some(Base {
                ref_name: "refs/heads/main".into(),
                label: "main".into(),
                commit: "m".into(),
                distance: Some(Distance {
                    ahead_from_base: 1,
                    behind_base,
                }),
            }),
            related: Vec::new(),
            related_total: 0,
            related_truncated: false,
            risk: "low",
            summary: String::new(),
            guidance: Vec::new(),
            suggested_actions: Vec::new(),
            model: "real-git-refs-no-virtual-branches",
            network_fetch_performed: false,
            ahead_behind_method: "for-each-ref",
        }
    }

    fn tools(d: &BranchStackData) -> Vec<&str> {
        d.suggested_actions.iter().map(|a| a.tool).collect()
    }

    #[test]
    fn in_sync_is_low_risk() {
        let mut d = data(0, 0, 0);
        assess(&mut d, false);
        assert_eq!(d.risk, "low");
        assert_eq!(
            d.summary,
            "On feat; 0 ahead / 0 behind origin/feat; 1 ahead / 0 behind base main."
        );
        assert_eq!(tools(&d), ["repo.history"]);
    }

    #[test]
    fn diverged_is_high_risk_and_asks_for_a_preflight_once() {
        let mut d = data(2, 3, 4);
        assess(&mut d, false);
        assert_eq!(d.risk, "high");
        assert_eq!(tools(&d), ["repo.conflictPreflight", "repo.history"]);
    }

    #[test]
    fn far_behind_the_base_is_high_risk() {
        let mut d = data(0, 0, 51);
        assess(&mut d, false);
        assert_eq!(d.risk, "high");
        let mut d = data(0, 0, 50);
        assess(&mut d, false);
        assert_eq!(d.risk, "medium");
    }
}
