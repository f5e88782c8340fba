//! The agent policy (`FLUXGIT_MCP_AGENT_POLICY`): which operations, refs, repositories and
//! worktree locations each agent may propose, checked before a card opens.
//!
//! The file format is documented in `docs/agent-policy.md`. Loading is strict because a
//! policy that silently means less than its author wrote is worse than none: a missing,
//! unreadable, oversized or malformed file, an unknown version, an unknown key, an unknown
//! operation name, a bad ref pattern or a relative path is a [`PolicyError`], and the
//! gateway does not start. Without a configured file the policy is permissive
//! ([`Policy::permissive`]) — every proposal still needs a person's approval; nothing here
//! ever approves, it can only refuse.
//!
//! The policy matches on the sanitized, self-declared `agentId`: it narrows what an honest
//! agent may ask for, it does not authenticate anyone.

mod glob;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::gateway::api::{OPERATION_TYPES, is_sanitized_agent_id};
pub use glob::RefGlob;

/// The only format version this build reads.
pub const VERSION: u64 = 1;

/// A policy file larger than this is refused rather than parsed.
const MAX_BYTES: u64 = 1024 * 1024;

/// Why a configured policy cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("agent policy {}: cannot read it: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("agent policy {}: {reason}", path.display())]
    NotAFile { path: PathBuf, reason: &'static str },
    #[error("agent policy {}: not valid JSON for this format at `{at}`: {message}", path.display())]
    Malformed {
        path: PathBuf,
        at: String,
        message: String,
    },
    #[error("agent policy {}: version {found} is not supported (this gitward reads version {VERSION})", path.display())]
    UnknownVersion { path: PathBuf, found: String },
    #[error("agent policy {}: `{at}`: {reason}", path.display())]
    Invalid {
        path: PathBuf,
        at: String,
        reason: String,
    },
}

/// The policy in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `None`: no policy configured, every proposal may reach a person.
    rules: Option<Rules>,
}

#[derive(Debug, Clone, PartialEq)]
struct Rules {
    agents: BTreeMap<String, Rule>,
    default: Option<Rule>,
}

#[derive(Debug, Clone, PartialEq)]
struct Rule {
    /// `None` for `*`.
    operations: Option<BTreeSet<String>>,
    refs: Option<Vec<RefGlob>>,
    repositories: Option<Vec<PathBuf>>,
    worktrees: Option<Vec<PathBuf>>,
}

/// What a proposal asks for, as the gateway resolved it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The sanitized `agentId`.
    pub agent_id: &'a str,
    /// The proposal's operation type first, then (for a plan) each step's, so a plan can
    /// never carry an operation its agent may not propose on its own.
    pub operations: &'a [&'a str],
    /// Every full ref name the operation would create, move or delete.
    pub refs: &'a [String],
    /// Every repository the proposal names, canonical.
    pub repositories: &'a [PathBuf],
    /// Every worktree location the operation would create, canonical.
    pub worktrees: &'a [PathBuf],
}

/// Which part of a rule refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RuleKind {
    /// Neither an agent entry nor a `default` covers the agent.
    NoRule,
    Operations,
    Refs,
    Repositories,
    Worktrees,
}

/// A refusal, shaped for the `details` of a 403 body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Denial {
    /// Where the deciding rule sits in the file: `agents.claude-code.refs`, `default.operations`.
    pub rule: String,
    pub kind: RuleKind,
    /// The operation, ref or path that no entry allowed.
    pub value: String,
    pub message: String,
}

/// The outcome of [`Policy::evaluate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny(Denial),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileV1 {
    #[allow(dead_code)]
    version: u64,
    #[serde(default)]
    agents: BTreeMap<String, RuleV1>,
    #[serde(default)]
    default: Option<RuleV1>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RuleV1 {
    operations: Vec<String>,
    #[serde(default)]
    refs: Option<Vec<String>>,
    #[serde(default)]
    path_constraints: Option<PathConstraintsV1>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathConstraintsV1 {
    #[serde(default)]
    repositories: Option<Vec<String>>,
    #[serde(default)]
    worktrees: Option<Vec<String>>,
}

impl Policy {
    /// No policy configured: the agent id narrows nothing.
    pub fn permissive() -> Policy {
        Policy { rules: None }
    }

    /// Loads the policy file at `path` (symbolic links followed; it must end at a regular
    /// file of at most 1 MiB).
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let text = read_file(path)?;
        Policy::parse(path, &text)
    }

    /// Parses policy `text`; `path` only names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Policy, PolicyError> {
        let malformed = |at: String, message: String| PolicyError::Malformed {
            path: path.to_owned(),
            at,
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| malformed(".".into(), e.to_string()))?;
        // The version decides how the rest is read, so it is checked before anything else.
        let found = value
            .get("version")
            .ok_or_else(|| malformed("version".into(), "missing field `version`".into()))?;
        if found.as_u64() != Some(VERSION) {
            return Err(PolicyError::UnknownVersion {
                path: path.to_owned(),
                found: found.to_string(),
            });
        }
        let file: FileV1 = serde_path_to_error::deserialize(value)
            .map_err(|e| malformed(e.path().to_string(), e.inner().to_string()))?;
        let invalid = |at: String, reason: String| PolicyError::Invalid {
            path: path.to_owned(),
            at,
            reason,
        };
        let mut agents = BTreeMap::new();
        for (id, rule) in file.agents {
            if !is_sanitized_agent_id(&id) {
                return Err(invalid(
                    format!("agents.{id}"),
                    "an agent id is 1-64 of [a-z0-9._-] (the sanitized client name); \
                     this one could never match"
                        .into(),
                ));
            }
            let rule = compile(rule, &format!("agents.{id}")).map_err(|(at, r)| invalid(at, r))?;
            agents.insert(id, rule);
        }
        let default = file
            .default
            .map(|rule| compile(rule, "default"))
            .transpose()
            .map_err(|(at, r)| invalid(at, r))?;
        Ok(Policy {
            rules: Some(Rules { agents, default }),
        })
    }

    /// True when no policy file is configured.
    pub fn is_permissive(&self) -> bool {
        self.rules.is_none()
    }

    /// Allows the request, or names the first rule that refuses it. The agent's own
    /// entry replaces `default` entirely (they are not merged); an agent with neither is
    /// refused.
    pub fn evaluate(&self, request: &Request<'_>) -> Decision {
        let Some(rules) = &self.rules else {
            return Decision::Allow;
        };
        let (rule, name) = match rules.agents.get(request.agent_id) {
            Some(rule) => (rule, format!("agents.{}", request.agent_id)),
            None => match &rules.default {
                Some(rule) => (rule, "default".to_owned()),
                None => {
                    return Decision::Deny(Denial {
                        rule: "default".into(),
                        kind: RuleKind::NoRule,
                        value: request.agent_id.to_owned(),
                        message: format!(
                            "the agent policy has no entry for agent {:?} and no default",
                            request.agent_id
                        ),
                    });
                }
            },
        };
        match rule.check(request) {
            None => Decision::Allow,
            Some((kind, field, value)) => Decision::Deny(Denial {
                message: format!("the agent policy rule `{name}.{field}` does not allow {value}"),
                rule: format!("{name}.{field}"),
                kind,
                value,
            }),
        }
    }
}

impl Rule {
    /// The first refusal: `(kind, field path inside the rule, refused value)`.
    fn check(&self, request: &Request<'_>) -> Option<(RuleKind, &'static str, String)> {
        // A request that names no operation is a caller's mistake; refusing it keeps a
        // rule from being passed by saying nothing.
        if request.operations.is_empty() {
            return Some((RuleKind::Operations, "operations", "no operation".into()));
        }
        if let Some(allowed) = &self.operations {
            if let Some(op) = request.operations.iter().find(|op| !allowed.contains(**op)) {
                return Some((RuleKind::Operations, "operations", (*op).to_owned()));
            }
        }
        if let Some(globs) = &self.refs {
            let refused = request
                .refs
                .iter()
                .find(|name| !globs.iter().any(|g| g.matches(name)));
            if let Some(name) = refused {
                return Some((RuleKind::Refs, "refs", name.clone()));
            }
        }
        let outside = |prefixes: &Option<Vec<PathBuf>>, paths: &[PathBuf]| {
            let prefixes = prefixes.as_deref()?;
            paths
                .iter()
                .find(|p| !prefixes.iter().any(|prefix| is_under(p, prefix)))
                .map(|p| p.display().to_string())
        };
        if let Some(path) = outside(&self.repositories, request.repositories) {
            return Some((RuleKind::Repositories, "pathConstraints.repositories", path));
        }
        if let Some(path) = outside(&self.worktrees, request.worktrees) {
            return Some((RuleKind::Worktrees, "pathConstraints.worktrees", path));
        }
        None
    }
}

/// True when `path` is `prefix` or inside it, compared by whole components (so
/// `/home/me/src-evil` is not under `/home/me/src`). A path with `..` is never under
/// anything: it is not canonical, and lexically it could climb out.
fn is_under(path: &Path, prefix: &Path) -> bool {
    path.is_absolute()
        && !path.components().any(|c| c == Component::ParentDir)
        && path.starts_with(prefix)
}

fn compile(rule: RuleV1, at: &str) -> Result<Rule, (String, String)> {
    let mut operations = BTreeSet::new();
    let mut any = false;
    for (i, op) in rule.operations.into_iter().enumerate() {
        if op == "*" {
            any = true;
        } else if OPERATION_TYPES.contains(&op.as_str()) {
            operations.insert(op);
        } else {
            return Err((
                format!("{at}.operations[{i}]"),
                format!(
                    "unknown operation {op:?}; known: * {}",
                    OPERATION_TYPES.join(" ")
                ),
            ));
        }
    }
    let refs = rule
        .refs
        .map(|patterns| {
            patterns
                .iter()
                .enumerate()
                .map(|(i, p)| RefGlob::parse(p).map_err(|r| (format!("{at}.refs[{i}]"), r)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let (repositories, worktrees) = match rule.path_constraints {
        None => (None, None),
        Some(pc) => (
            prefixes(
                pc.repositories,
                &format!("{at}.pathConstraints.repositories"),
            )?,
            prefixes(pc.worktrees, &format!("{at}.pathConstraints.worktrees"))?,
        ),
    };
    Ok(Rule {
        operations: (!any).then_some(operations),
        refs,
        repositories,
        worktrees,
    })
}

/// Absolute, `..`-free prefixes, canonicalized when they exist (so a symlinked home
/// compares like the canonical repository paths the gateway checks against them).
fn prefixes(list: Option<Vec<String>>, at: &str) -> Result<Option<Vec<PathBuf>>, (String, String)> {
    let Some(list) = list else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, text) in list.into_iter().enumerate() {
        let path = PathBuf::from(&text);
        if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
            return Err((
                format!("{at}[{i}]"),
                format!("{text:?} must be an absolute path without `..`"),
            ));
        }
        out.push(std::fs::canonicalize(&path).unwrap_or_else(|_| path.components().collect()));
    }
    Ok(Some(out))
}

fn read_file(path: &Path) -> Result<String, PolicyError> {
    let unreadable = |source| PolicyError::Unreadable {
        path: path.to_owned(),
        source,
    };
    // Non-blocking, so a FIFO planted at the path cannot hang the start; it is then
    // refused as not a regular file.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(PolicyError::NotAFile {
            path: path.to_owned(),
            reason: "not a regular file",
        });
    }
    if meta.len() > MAX_BYTES {
        return Err(PolicyError::NotAFile {
            path: path.to_owned(),
            reason: "larger than 1 MiB",
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    String::from_utf8(bytes).map_err(|_| PolicyError::Malformed {
        path: path.to_owned(),
        at: ".".into(),
        message: "not UTF-8".into(),
    })
}
