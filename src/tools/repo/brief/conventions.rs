//! The conventions `repo.brief` detects: default branch, commit-message style, branch
//! naming, CODEOWNERS, guidance files, hooks, LFS, sparse checkout and signing.

use std::collections::BTreeMap;
use std::path::Path;

use super::{BranchNaming, CommitStyle, Conventions, Counted, Hooks};
use crate::error::ToolError;
use crate::git::{Git, Repo, gitconfig, head_tree, refs};
use crate::parse::codeowners;
use crate::parse::log::Commit;

/// How many subjects the commit-message conventions are learned from.
pub(super) const STYLE_SAMPLE: usize = 50;
/// Local branch names read for naming conventions.
const BRANCH_SAMPLE: usize = 2000;
/// Hook names listed at most.
const HOOK_NAMES: usize = 12;
/// Bytes of `.gitattributes` examined for LFS.
const ATTRIBUTES_CAP: u64 = 1024 * 1024;

/// What conventions are computed from, besides the recent commits.
pub(super) struct Sources {
    refs: BranchRefs,
    config: ConfigFacts,
    files: ConventionFiles,
}

pub(super) async fn read(git: &Git<'_>, worktree: Option<&Path>) -> Result<Sources, ToolError> {
    let (refs, config, files) = tokio::try_join!(
        branch_refs(git),
        read_config(git),
        convention_files(git, worktree),
    )?;
    Ok(Sources {
        refs,
        config,
        files,
    })
}

pub(super) fn build(s: Sources, commits: &[Commit], repo: &Repo) -> Conventions {
    let (default_branch, default_branch_source) = default_branch(&s.refs);
    Conventions {
        branch_names: branch_naming(&s.refs, default_branch.as_deref()),
        default_branch,
        default_branch_source,
        commit_messages: commit_style(commits),
        codeowners: s.files.codeowners,
        guidance_files: s.files.guidance,
        hooks: list_hooks(repo, s.config.hooks_path.as_deref()),
        lfs: s.files.lfs,
        sparse_checkout: s.config.sparse_checkout,
        commit_signing: s.config.commit_signing,
    }
}

/// Local branch names and the few remote refs that reveal the default branch.
#[derive(Debug, Default)]
struct BranchRefs {
    local: Vec<String>,
    origin_head: Option<String>,
    origin: Vec<String>,
}

async fn branch_refs(git: &Git<'_>) -> Result<BranchRefs, ToolError> {
    // Two listings, so a repository with thousands of local branches cannot push the
    // default-branch refs past the `--count` cut.
    let origin: Vec<String> = ["HEAD", "main", "master"]
        .iter()
        .map(|b| format!("refs/remotes/origin/{b}"))
        .collect();
    let local = ["refs/heads/".to_owned()];
    let (local, origin) = tokio::try_join!(
        refs::with_targets(git, &local, Some(BRANCH_SAMPLE)),
        refs::with_targets(git, &origin, None),
    )?;
    Ok(sort_branch_refs(local.into_iter().chain(origin)))
}

/// Sorts listed refs (full name, symbolic target) into what conventions read.
fn sort_branch_refs(listed: impl IntoIterator<Item = (String, Option<String>)>) -> BranchRefs {
    let mut refs = BranchRefs::default();
    for (name, target) in listed {
        if let Some(local) = name.strip_prefix("refs/heads/") {
            if refs.local.len() < BRANCH_SAMPLE {
                refs.local.push(local.to_owned());
            }
        } else if name == "refs/remotes/origin/HEAD" {
            refs.origin_head = target
                .as_deref()
                .and_then(|t| t.strip_prefix("refs/remotes/origin/"))
                .map(str::to_owned);
        } else if let Some(remote) = name.strip_prefix("refs/remotes/origin/") {
            refs.origin.push(remote.to_owned());
        }
    }
    refs
}

fn default_branch(refs: &BranchRefs) -> (Option<String>, Option<&'static str>) {
    if let Some(head) = &refs.origin_head {
        return (Some(head.clone()), Some("origin/HEAD"));
    }
    for name in ["main", "master"] {
        if refs.local.iter().any(|b| b == name) {
            return (Some(name.to_owned()), Some("local"));
        }
    }
    for name in ["main", "master"] {
        if refs.origin.iter().any(|b| b == name) {
            return (Some(name.to_owned()), Some("remote"));
        }
    }
    (None, None)
}

fn top(counts: BTreeMap<String, u64>, n: usize) -> Vec<Counted> {
    let mut list: Vec<Counted> = counts
        .into_iter()
        .map(|(name, count)| Counted { name, count })
        .collect();
    list.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    list.truncate(n);
    list
}

fn branch_naming(refs: &BranchRefs, default: Option<&str>) -> BranchNaming {
    let names: Vec<&String> = refs
        .local
        .iter()
        .filter(|b| Some(b.as_str()) != default)
        .collect();
    let mut prefixes = BTreeMap::new();
    for name in &names {
        if let Some((prefix, rest)) = name.split_once('/') {
            if !rest.is_empty() {
                *prefixes.entry(format!("{prefix}/")).or_insert(0) += 1;
            }
        }
    }
    BranchNaming {
        sampled: names.len() as u64,
        prefixes: top(prefixes, 5),
        examples: names.iter().take(3).map(|s| s.to_string()).collect(),
    }
}

/// The type of a Conventional Commits subject (`feat(api)!: add x` → `feat`), lowercased.
pub(super) fn conventional_type(subject: &str) -> Option<String> {
    let (head, rest) = subject.split_once(": ")?;
    if rest.trim().is_empty() {
        return None;
    }
    let head = head.strip_suffix('!').unwrap_or(head);
    let kind = match head.split_once('(') {
        Some((kind, scope)) => {
            let scope = scope.strip_suffix(')')?;
            if scope.is_empty() || scope.contains(['(', ')']) {
                return None;
            }
            kind
        }
        None => head,
    };
    let ok = (1..=16).contains(&kind.len()) && kind.bytes().all(|b| b.is_ascii_alphabetic());
    ok.then(|| kind.to_ascii_lowercase())
}

fn commit_style(commits: &[Commit]) -> CommitStyle {
    let subjects: Vec<&str> = commits
        .iter()
        .take(STYLE_SAMPLE)
        .filter(|c| c.parents.len() < 2)
        .map(|c| c.subject.as_str())
        .collect();
    if subjects.is_empty() {
        return CommitStyle::default();
    }
    let mut types = BTreeMap::new();
    let mut conventional = 0u64;
    for subject in &subjects {
        if let Some(kind) = conventional_type(subject) {
            conventional += 1;
            *types.entry(kind).or_insert(0) += 1;
        }
    }
    let ratio = conventional as f64 / subjects.len() as f64;
    let ratio = (ratio * 100.0).round() / 100.0;
    CommitStyle {
        sampled: subjects.len() as u64,
        conventional_commit_ratio: Some(ratio),
        style: Some(match ratio {
            r if r >= 0.6 => "conventional",
            r if r >= 0.2 => "mixed",
            _ => "free-form",
        }),
        types: top(types, 5),
        examples: subjects.iter().take(2).map(|s| clip(s, 72)).collect(),
    }
}

pub(super) fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[derive(Debug, Default)]
struct ConfigFacts {
    hooks_path: Option<String>,
    sparse_checkout: bool,
    commit_signing: bool,
}

async fn read_config(git: &Git<'_>) -> Result<ConfigFacts, ToolError> {
    let values = gitconfig::scoped_values(
        git,
        r"^(core\.hookspath|core\.sparsecheckout|commit\.gpgsign)$",
    )
    .await?;
    let mut facts = ConfigFacts::default();
    for v in values {
        let value = v.value.as_deref().unwrap_or("true");
        let truthy = matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "yes" | "on" | "1"
        );
        match v.key.as_str() {
            "core.hookspath" => facts.hooks_path = Some(value.to_owned()),
            "core.sparsecheckout" => facts.sparse_checkout = truthy,
            "commit.gpgsign" => facts.commit_signing = truthy,
            _ => {}
        }
    }
    Ok(facts)
}

fn list_hooks(repo: &Repo, hooks_path: Option<&str>) -> Hooks {
    let dir = match hooks_path {
        Some(p) if Path::new(p).is_absolute() => Path::new(p).to_path_buf(),
        Some(p) => repo.path.join(p),
        None => repo.common_dir.join("hooks"),
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".sample") && !n.starts_with('.'))
        .collect();
    names.sort();
    let count = names.len() as u64;
    names.truncate(HOOK_NAMES);
    Hooks {
        hooks_path: hooks_path.map(str::to_owned),
        names,
        count,
    }
}

/// Guidance files looked for, in the order they are reported.
const GUIDANCE: [&str; 8] = [
    "AGENTS.md",
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    "CONTRIBUTING.md",
    "CONTRIBUTING",
    "CONTRIBUTING.rst",
    ".github/CONTRIBUTING.md",
    "docs/CONTRIBUTING.md",
];

#[derive(Debug, Default)]
struct ConventionFiles {
    codeowners: Option<String>,
    guidance: Vec<String>,
    lfs: bool,
}

/// Which convention files exist: on disk in a working tree, in HEAD's tree when bare.
async fn convention_files(
    git: &Git<'_>,
    worktree: Option<&Path>,
) -> Result<ConventionFiles, ToolError> {
    let wanted: Vec<&str> = codeowners::LOCATIONS
        .iter()
        .chain(GUIDANCE.iter())
        .copied()
        .collect();
    let (present, attributes): (Vec<&str>, Vec<u8>) = match worktree {
        Some(top) => {
            let top = top.to_path_buf();
            crate::safe_file::off_thread(git.cancel(), move || {
                let present = wanted
                    .iter()
                    .copied()
                    .filter(|f| top.join(f).is_file())
                    .collect();
                (present, read_capped(&top, ".gitattributes", ATTRIBUTES_CAP))
            })
            .await?
        }
        None => {
            let (names, attributes) = tokio::try_join!(
                head_tree::present(git, &wanted),
                head_tree::blob(git, ".gitattributes", 1024 * 1024),
            )?;
            let present = wanted
                .iter()
                .copied()
                .filter(|w| names.iter().any(|n| n == w))
                .collect();
            // Only a whole file counts: a cut one could hide or invent a rule.
            let attributes = match attributes {
                Some((bytes, true)) => bytes,
                _ => Vec::new(),
            };
            (present, attributes)
        }
    };
    Ok(ConventionFiles {
        codeowners: codeowners::LOCATIONS
            .iter()
            .find(|l| present.contains(l))
            .map(|l| l.to_string()),
        guidance: GUIDANCE
            .iter()
            .filter(|g| present.contains(g))
            .map(|g| g.to_string())
            .collect(),
        lfs: uses_lfs(&attributes),
    })
}

/// True when some `.gitattributes` line sets `filter=lfs`.
fn uses_lfs(attributes: &[u8]) -> bool {
    String::from_utf8_lossy(attributes).lines().any(|line| {
        let line = line.trim();
        !line.starts_with('#') && line.split_whitespace().skip(1).any(|a| a == "filter=lfs")
    })
}

/// The first `cap` bytes of `rel` under `top` when it is a regular file reached without
/// a symlink (empty otherwise), so an enormous file cannot exhaust memory. Git itself does
/// not follow symbolic links for in-tree attribute files, and a link could lead to a FIFO.
fn read_capped(top: &Path, rel: &str, cap: u64) -> Vec<u8> {
    crate::safe_file::read_prefix_in(top, rel, cap).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conventional_subjects() {
        let yes = [
            "feat: add x",
            "fix(parser): handle y",
            "refactor!: drop z",
            "Feat(API)!: shout",
            "chore(deps-dev): bump",
        ];
        let no = [
            "Add x",
            "feat:no space",
            "fix(): empty scope",
            "Merge branch 'a'",
            "fix(a)(b): twice",
            "feat: ",
            "WIP 2: stuff",
            "v1.2: release",
        ];
        for s in yes {
            assert!(conventional_type(s).is_some(), "{s}");
        }
        for s in no {
            assert!(conventional_type(s).is_none(), "{s}");
        }
        assert_eq!(
            conventional_type("Feat(API)!: shout").as_deref(),
            Some("feat")
        );
    }

    #[test]
    fn lfs_attribute_lines() {
        assert!(uses_lfs(b"*.psd filter=lfs diff=lfs merge=lfs -text\n"));
        assert!(!uses_lfs(b"# *.psd filter=lfs\n*.txt text\n"));
        assert!(!uses_lfs(b""));
    }

    #[test]
    fn default_branch_prefers_origin_head() {
        let listed = |rows: &[(&str, Option<&str>)]| {
            sort_branch_refs(
                rows.iter()
                    .map(|(n, t)| (n.to_string(), t.map(str::to_owned)))
                    .collect::<Vec<_>>(),
            )
        };
        let refs = listed(&[
            ("refs/heads/feat/a", None),
            ("refs/heads/master", None),
            (
                "refs/remotes/origin/HEAD",
                Some("refs/remotes/origin/trunk"),
            ),
        ]);
        assert_eq!(
            default_branch(&refs),
            (Some("trunk".into()), Some("origin/HEAD"))
        );
        let refs = listed(&[("refs/heads/feat/a", None), ("refs/heads/master", None)]);
        assert_eq!(
            default_branch(&refs),
            (Some("master".into()), Some("local"))
        );
        let naming = branch_naming(&refs, Some("master"));
        assert_eq!(naming.sampled, 1);
        assert_eq!(naming.prefixes[0].name, "feat/");
    }
}
