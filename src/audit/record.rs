//! What a `tools/call` becomes in the ledger: labels, hashed scope and arguments, a short
//! summary. Raw paths, arguments and results are never written.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use uuid::Uuid;

use super::canonical;
use super::flood::{self, Admit, Flood};
use super::ledger::Entry;
use super::writer::{AuditWriter, Durability};
use crate::error::code;
use crate::observe::{CallEvent, CallObserver, Settled};

/// Longer tool names (only unknown tools can have them) are hashed.
const MAX_TOOL_NAME: usize = 128;

/// Records every tool call through the writer thread.
pub struct AuditObserver {
    writer: Arc<AuditWriter>,
    /// One per process: ties together the calls of one server run. The client's
    /// self-declared name is attribution only and is not used here.
    session_id: String,
    refusals: Flood<Refusal>,
    /// Reads beyond the budget, counted per tool and outcome.
    reads: Flood<Read>,
}

/// A kind of read: the tool and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Read {
    tool: String,
    labels: Labels,
    result: &'static str,
}

/// A kind of refused call: the tool (`None` for every unknown tool) and the outcome.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Refusal {
    tool: Option<String>,
    labels: Labels,
    result: &'static str,
    summary: String,
}

impl AuditObserver {
    /// `refusal_window`: how long refusals of one kind are folded into one entry.
    pub fn new(writer: Arc<AuditWriter>, refusal_window: std::time::Duration) -> AuditObserver {
        AuditObserver {
            writer,
            session_id: Uuid::new_v4().to_string(),
            refusals: Flood::new(refusal_window),
            reads: Flood::with_budget(flood::READ_WINDOW, flood::READ_BUDGET),
        }
    }

    /// Records `budget` reads per tool and `window` as entries of their own and counts
    /// the rest into one `read_calls` entry per tool, outcome and window.
    pub fn with_read_budget(mut self, window: std::time::Duration, budget: u64) -> AuditObserver {
        self.reads = Flood::with_budget(window, budget);
        self
    }

    /// Writes the counts of refused calls not yet written; call before the writer finishes.
    pub fn finish(&self) {
        self.summarize(self.refusals.drain());
        self.summarize_reads(self.reads.drain());
    }

    fn summarize_reads(&self, due: Vec<flood::Summary<Read>>) {
        for s in due {
            let session_id = self.session_id.clone();
            self.writer.submit(Box::new(move || {
                let mut entry = Entry::now();
                entry
                    .set("tool", s.kind.tool)
                    .set("event_type", "read_calls")
                    .set("risk", s.kind.labels.risk)
                    .set("approval", s.kind.labels.approval)
                    .set("result", s.kind.result)
                    .set("session_id", session_id)
                    .set("summary", format!("{} more reads", s.count))
                    .set("count", s.count)
                    .set("firstTimestamp", s.first_ms)
                    .set("lastTimestamp", s.last_ms)
                    .set("readOnly", true)
                    .set("sidecarReadOnly", true);
                entry
            }));
        }
    }

    fn summarize(&self, due: Vec<flood::Summary<Refusal>>) {
        for s in due {
            let session_id = self.session_id.clone();
            self.writer.submit(Box::new(move || {
                let mut entry = Entry::now();
                if let Some(tool) = s.kind.tool {
                    entry.set("tool", tool);
                }
                entry
                    .set("event_type", "refused_calls")
                    .set("risk", s.kind.labels.risk)
                    .set("approval", s.kind.labels.approval)
                    .set("result", s.kind.result)
                    .set("session_id", session_id)
                    .set("summary", s.kind.summary)
                    .set("count", s.count)
                    .set("firstTimestamp", s.first_ms)
                    .set("lastTimestamp", s.last_ms)
                    .set("readOnly", s.kind.labels.read_only)
                    .set("sidecarReadOnly", true);
                entry
            }));
        }
    }
}

impl CallObserver for AuditObserver {
    fn on_call(&self, event: &CallEvent<'_>) -> Option<Settled> {
        // Only cheap work here: hashing and resolving paths happen on the writer thread.
        let mut entry = Entry::now();
        let tool = tool_name(event.tool);
        let labels = Labels::of(&tool, event.known, event.read_only);
        let result = if !event.known {
            "blocked"
        } else if event.is_error {
            "error"
        } else {
            "success"
        };
        let summary = summary(event, result);
        let now = Instant::now();
        self.summarize(self.refusals.due(now));
        self.summarize_reads(self.reads.due(now));
        let refused = !event.known || event.error_code == Some(code::INVALID_PARAMS);
        if refused {
            // Kinds are few by construction: the served tools, and one for every unknown
            // name. The summary leaves out the field a client names, which it could vary.
            let kind = Refusal {
                tool: event.known.then(|| tool.clone()),
                labels,
                result,
                summary: if event.known {
                    format!("error {}", code::INVALID_PARAMS)
                } else {
                    summary.clone()
                },
            };
            if self.refusals.admit(&kind, now, entry.timestamp_ms()) == Admit::Counted {
                return None;
            }
        } else if event.known && event.read_only {
            let kind = Read {
                tool: tool.clone(),
                labels,
                result,
            };
            if self.reads.admit(&kind, now, entry.timestamp_ms()) == Admit::Counted {
                return None;
            }
        }
        // A call that changed something must be on disk, synced, before it is answered;
        // for the rest, written is enough (group commit syncs them moments later).
        let durability = if event.known && !event.read_only {
            Durability::Synced
        } else {
            Durability::Written
        };
        let arguments = event.arguments.clone();
        let session_id = self.session_id.clone();
        let duration_ms = u64::try_from(event.duration.as_millis()).unwrap_or(u64::MAX);
        let build = Box::new(move || {
            entry
                .set("tool", tool)
                .set("event_type", labels.event_type)
                .set("repo_scope", repo_scope(&arguments));
            if !arguments.is_null() {
                entry.set(
                    "args_fingerprint",
                    canonical::sha256_tag(&canonical::to_vec(&arguments)),
                );
            }
            entry
                .set("risk", labels.risk)
                .set("approval", labels.approval)
                .set("result", result)
                .set("session_id", session_id)
                .set("duration_ms", duration_ms)
                .set("summary", summary)
                .set("readOnly", labels.read_only)
                // This server never changes a repository itself: writes are only proposed
                // to the approval gateway.
                .set("sidecarReadOnly", true);
            entry
        });
        Some(self.writer.submit_waiting(build, durability))
    }
}

/// The audit labels of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Labels {
    pub event_type: &'static str,
    pub read_only: bool,
    pub approval: &'static str,
    pub risk: &'static str,
}

impl Labels {
    pub fn of(tool: &str, known: bool, read_only: bool) -> Labels {
        let labels = |event_type, read_only, approval, risk| Labels {
            event_type,
            read_only,
            approval,
            risk,
        };
        if !known {
            return labels("write_block", false, "denied", "none");
        }
        // The product contract's own example labels a read as `risk: read`, `approval: none`.
        if read_only {
            return labels("tool_call", true, "none", "read");
        }
        if tool == "operation.cancel" {
            return labels("proposal_cancel", false, "none", "none");
        }
        if let Some(kind) = tool.strip_prefix("operation.preview.") {
            return labels("write_proposal", false, "ui_handshake", preview_risk(kind));
        }
        // Other changing tools (the spec workflow) edit their own workspace files only.
        labels("tool_call", false, "none", "low")
    }
}

fn preview_risk(kind: &str) -> &'static str {
    crate::operation::risk::of(kind).as_str()
}

/// The called name, when it looks like a tool name; otherwise (a client may send anything,
/// a path included) `name:sha256:<hex>` of its JSON literal.
fn tool_name(name: &str) -> String {
    let plain = !name.is_empty()
        && name.len() <= MAX_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if plain {
        name.to_owned()
    } else {
        format!("name:{}", literal_hash(name))
    }
}

/// The repository a call concerns, pseudonymised: see `docs/audit-format.md`.
pub fn repo_scope(arguments: &Value) -> String {
    if let Some(id) = arguments.get("repoId").and_then(Value::as_str) {
        return format!("repoId:{}", literal_hash(id));
    }
    if let Some(path) = arguments.get("repoPath").and_then(Value::as_str) {
        // The canonical path, so every alias of one repository hashes alike; the input
        // as given when it does not resolve.
        let canonical = std::fs::canonicalize(path)
            .ok()
            .and_then(|p| p.into_os_string().into_string().ok());
        return format!(
            "repoPath:{}",
            literal_hash(canonical.as_deref().unwrap_or(path))
        );
    }
    for key in ["repoPaths", "repositories"] {
        if let Some(list) = arguments.get(key).and_then(Value::as_array) {
            return format!("fleet:{}", list.len());
        }
    }
    "unknown".into()
}

/// `sha256:<hex>` of the JSON string literal of `s`, quotes included.
fn literal_hash(s: &str) -> String {
    canonical::sha256_tag(&serde_json::to_vec(s).expect("a string serializes"))
}

/// A short outcome: never git's stderr, never a path.
fn summary(event: &CallEvent<'_>, result: &str) -> String {
    match result {
        "blocked" => "unknown tool".into(),
        "error" => {
            let mut text = match event.error_code {
                Some(code) => format!("error {code}"),
                None => "error".into(),
            };
            // Errors only: a successful call's payload is never parsed here.
            let payload: Value = serde_json::from_str(event.payload.get()).unwrap_or_default();
            let field = payload
                .pointer("/error/data/field")
                .and_then(Value::as_str)
                .filter(|f| {
                    f.len() <= 64
                        && f.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"._[]".contains(&b))
                });
            if let Some(field) = field {
                text.push_str(" (");
                text.push_str(field);
                text.push(')');
            }
            text
        }
        _ => "ok".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_follow_the_contract() {
        assert_eq!(
            Labels::of("repo.status", true, true),
            Labels {
                event_type: "tool_call",
                read_only: true,
                approval: "none",
                risk: "read"
            }
        );
        assert_eq!(Labels::of("nope", false, false).event_type, "write_block");
        assert_eq!(Labels::of("nope", false, false).approval, "denied");
        assert_eq!(
            Labels::of("operation.preview.reset", true, false).risk,
            "high"
        );
        assert_eq!(
            Labels::of("operation.preview.push", true, false).risk,
            "medium"
        );
        assert_eq!(
            Labels::of("operation.preview.commit", true, false).risk,
            "low"
        );
        assert_eq!(
            Labels::of("operation.preview.commit", true, false).approval,
            "ui_handshake"
        );
        assert_eq!(
            Labels::of("operation.cancel", true, false).event_type,
            "proposal_cancel"
        );
    }

    #[test]
    fn odd_tool_names_are_hashed() {
        assert_eq!(
            tool_name("operation.preview.branch-delete_2"),
            "operation.preview.branch-delete_2"
        );
        assert_eq!(
            tool_name("/home/me/secret"),
            format!("name:{}", canonical::sha256_tag(b"\"/home/me/secret\""))
        );
        assert!(tool_name(&"a".repeat(129)).starts_with("name:sha256:"));
        assert!(tool_name("").starts_with("name:sha256:"));
    }

    #[test]
    fn repo_scope_never_holds_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let alias = real.join(".");
        let a = repo_scope(&json!({ "repoPath": real }));
        let b = repo_scope(&json!({ "repoPath": alias }));
        assert_eq!(a, b, "aliases of one directory correlate");
        assert!(!a.contains(real.to_str().unwrap()));
        assert_eq!(
            a,
            format!(
                "repoPath:{}",
                canonical::sha256_tag(format!("\"{}\"", real.display()).as_bytes())
            )
        );
        assert_eq!(
            repo_scope(&json!({ "repoPath": "/does/not/exist" })),
            format!("repoPath:{}", canonical::sha256_tag(b"\"/does/not/exist\""))
        );
        assert_eq!(repo_scope(&json!({ "repoPaths": ["/a", "/b"] })), "fleet:2");
        assert!(repo_scope(&json!({ "repoId": "x" })).starts_with("repoId:sha256:"));
        assert_eq!(repo_scope(&json!({})), "unknown");
        assert_eq!(repo_scope(&Value::Null), "unknown");
    }
}
