//! Fitting `repo.brief` into the caller's token budget, section by section.

use super::BriefData;
use super::conventions::clip;
use crate::tools::Local;

/// Characters per token the budget assumes (JSON text, mostly ASCII).
const CHARS_PER_TOKEN: usize = 4;

/// Shrinks the result until it fits `max_tokens`, cutting the least useful detail first.
pub(super) fn fit(mut out: Local<BriefData>, max_tokens: u64) -> Local<BriefData> {
    let limit = max_tokens as usize * CHARS_PER_TOKEN;
    out.data.budget.max_tokens = max_tokens;
    let size = |o: &Local<BriefData>| serde_json::to_string(o).map_or(usize::MAX, |s| s.len());
    let tokens = |o: &Local<BriefData>| size(o).div_ceil(CHARS_PER_TOKEN) as u64;
    for (name, step) in steps() {
        loop {
            out.data.budget.approx_tokens = tokens(&out);
            if size(&out) <= limit {
                return out;
            }
            if !step(&mut out.data) {
                break;
            }
            let trimmed = &mut out.data.budget.trimmed;
            if !trimmed.contains(&name) {
                trimmed.push(name);
            }
            // A section dropped whole makes the notes about its parts redundant.
            if out.data.conventions.is_none() {
                trimmed.retain(|t| !t.starts_with("conventions."));
            }
            if out.data.recent_commits.is_empty() {
                trimmed.retain(|t| *t != "recentCommits.subjects");
            }
        }
    }
    // Whatever remains is the fixed skeleton (plus long names); report its true size.
    out.data.budget.approx_tokens = tokens(&out);
    out
}

/// Halves `list` (not below `floor`); false when it was already at the floor.
fn halve<T>(list: &mut Vec<T>, floor: usize, truncated: &mut bool) -> bool {
    if list.len() <= floor {
        return false;
    }
    let keep = (list.len() / 2).max(floor);
    list.truncate(keep);
    *truncated = true;
    true
}

type Step = fn(&mut BriefData) -> bool;

/// The cuts, least useful detail first; each returns false when it had nothing to cut.
fn steps() -> [(&'static str, Step); 13] {
    [
        ("conventions.examples", |d| {
            let Some(c) = &mut d.conventions else {
                return false;
            };
            let had = !c.commit_messages.examples.is_empty() || !c.branch_names.examples.is_empty();
            c.commit_messages.examples.clear();
            c.branch_names.examples.clear();
            had
        }),
        ("recentCommits", |d| {
            halve(&mut d.recent_commits, 3, &mut d.recent_commits_truncated)
        }),
        ("workingTree.topPaths", |d| match &mut d.working_tree {
            Some(w) => halve(&mut w.top_paths, 3, &mut w.top_paths_truncated),
            None => false,
        }),
        ("conventions.hooks.names", |d| match &mut d.conventions {
            Some(c) if !c.hooks.names.is_empty() => {
                c.hooks.names.clear();
                true
            }
            _ => false,
        }),
        ("submodules.attention", |d| match &mut d.submodules {
            Some(s) if !s.attention.is_empty() => {
                s.attention.clear();
                s.attention_truncated = true;
                true
            }
            _ => false,
        }),
        ("conventions.types", |d| {
            let Some(c) = &mut d.conventions else {
                return false;
            };
            let had = !c.commit_messages.types.is_empty() || c.branch_names.prefixes.len() > 1;
            c.commit_messages.types.clear();
            c.branch_names.prefixes.truncate(1);
            had
        }),
        ("recentCommits.subjects", |d| {
            let mut cut = false;
            for c in &mut d.recent_commits {
                let short = clip(&c.subject, 48);
                cut |= short != c.subject;
                c.subject = short;
            }
            cut
        }),
        ("recentCommits", |d| {
            halve(&mut d.recent_commits, 1, &mut d.recent_commits_truncated)
        }),
        ("workingTree.topPaths", |d| match &mut d.working_tree {
            Some(w) => halve(&mut w.top_paths, 0, &mut w.top_paths_truncated),
            None => false,
        }),
        ("hints", |d| {
            let had = d.hints.len() > 1;
            d.hints.truncate(1);
            had
        }),
        ("conventions", |d| d.conventions.take().is_some()),
        ("recentCommits", |d| {
            halve(&mut d.recent_commits, 0, &mut d.recent_commits_truncated)
        }),
        ("hints", |d| {
            let had = !d.hints.is_empty();
            d.hints.clear();
            had
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::{Brief, sample};
    use super::*;
    use crate::tools::Tool;

    #[test]
    fn halving_stops_at_the_floor() {
        let mut list: Vec<u8> = (0..9).collect();
        let mut truncated = false;
        assert!(halve(&mut list, 3, &mut truncated));
        assert_eq!((list.len(), truncated), (4, true));
        assert!(halve(&mut list, 3, &mut truncated));
        assert_eq!(list.len(), 3);
        assert!(!halve(&mut list, 3, &mut truncated));
        assert!(halve(&mut list, 0, &mut truncated));
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn every_cut_has_a_distinct_purpose_in_order() {
        let names: Vec<&str> = steps().iter().map(|(n, _)| *n).collect();
        assert_eq!(names.first(), Some(&"conventions.examples"));
        assert_eq!(names.last(), Some(&"hints"));
        // The sections dropped whole come after the cuts of their parts.
        let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert!(at("conventions.types") < at("conventions"));
        assert!(
            at("recentCommits.subjects")
                < names.iter().rposition(|x| *x == "recentCommits").unwrap()
        );
    }

    fn local(data: BriefData) -> Local<BriefData> {
        Local {
            tool: Brief::NAME,
            read_only: true,
            source: "local-git",
            repo_path: "/r".into(),
            disarmed_filters: Vec::new(),
            data,
        }
    }

    #[test]
    fn a_small_result_is_left_whole() {
        let out = fit(local(sample(2)), 8000);
        assert!(out.data.budget.trimmed.is_empty());
        assert_eq!(out.data.recent_commits.len(), 2);
    }

    #[test]
    fn a_large_result_is_cut_until_it_fits_and_says_so() {
        let out = fit(local(sample(20)), 300);
        let size = serde_json::to_string(&out).unwrap().len();
        assert!(size <= 300 * CHARS_PER_TOKEN, "{size}");
        assert!(out.data.recent_commits_truncated);
        assert_eq!(out.data.budget.trimmed.first(), Some(&"recentCommits"));
        assert_eq!(
            out.data.budget.approx_tokens,
            size.div_ceil(CHARS_PER_TOKEN) as u64
        );
    }
}
