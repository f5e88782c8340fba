//! Finding other coding agents working in a repository, from local sources only.
//!
//! The sources are: running agent processes (and their children), the agents' own
//! session stores (JSONL read from the tail, SQLite opened read-only and immutable),
//! files agents keep in the repository, and other servers' presence records. Each source
//! yields [`Finding`]s; findings of the same agent are merged into one [`Agent`]. Only
//! agent kinds, states, tool names, branches, repository-relative paths, times, pids
//! and declared client names leave this module: never prompts, messages, commands,
//! file contents, argv or environment.
//!
//! The whole call runs under one deadline. The process scan goes first (its pids direct
//! the store reads), then every store source runs on its own thread; a source still
//! running at the deadline is reported in `sourcesUnavailable` and its result dropped.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use schemars::JsonSchema;
use serde::Serialize;

use super::{editors, extensions, procscan, records, stores};

pub use super::finding::{
    Finding, MAX_FILES, Outcome, RECENT_MS, Scope, Source, State, WORKING_MS, Worktree,
    head_branch, normalize, sanitize_branch, sanitize_client, sanitize_tool,
};
pub use super::kinds::{DETECTORS, Detector, agent_for_client};

/// One agent in the result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// The agent kind (`claude-code`, `codex`, `gemini-cli`, `aider`, `opencode`, …), or
    /// the declared MCP client name when it maps to no known agent.
    pub agent: String,
    pub state: State,
    pub sources: Vec<Source>,
    /// The branch it works on: the worktree's current branch when a live process is
    /// known, else what its store recorded.
    pub branch: Option<String>,
    pub last_tool: Option<String>,
    /// Repository-relative paths it touched, newest first (at most 20).
    pub files: Vec<String>,
    /// Its process id (same user only), when a live process is known.
    pub pid: Option<u32>,
    pub last_activity_ms: Option<u64>,
    /// The `clientInfo.name` it declared to a FluxGit MCP server, when known.
    pub mcp_client: Option<String>,
    /// Probably the caller's own session (an ancestor process of this server, or its
    /// store or MCP record).
    pub likely_caller: bool,
    /// The same kind of agent as the caller.
    pub same_agent_as_caller: bool,
}

/// One source that could not answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Unavailable {
    pub source: String,
    /// `deadline`, `byteBudget`, `unsupportedPlatform`, `unreadable` or `corrupt`.
    pub reason: String,
}

/// Counters that show how much a call read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScanStats {
    pub processes_scanned: u64,
    pub store_files_read: u64,
    pub bytes_read: u64,
    /// True when the deadline or the per-call byte budget (24 MiB) cut a source short.
    pub partial: bool,
    pub budget_ms: u64,
}

/// The detector's answer.
pub struct Detection {
    pub agents: Vec<Agent>,
    pub omitted_likely_caller: u64,
    pub sources_checked: Vec<String>,
    pub sources_unavailable: Vec<Unavailable>,
    pub stats: ScanStats,
}

/// A store reader: a name for `sourcesChecked` and the function that reads it.
type Reader = (&'static str, fn(&Scope, &procscan::Snapshot) -> Outcome);

const READERS: &[Reader] = &[
    ("mcpPresence", records::read),
    ("claude-code", stores::claude),
    ("codex", stores::codex),
    ("gemini-cli", stores::gemini),
    ("opencode", stores::opencode),
    ("goose", stores::goose),
    ("copilot-cli", stores::copilot),
    ("cline", extensions::cline),
    ("continue", extensions::continue_dev),
    ("amp", stores::amp),
    ("repoFiles", stores::repo_files),
    ("gitCommits", stores::git_commits),
    ("editor", editors::read),
];

/// Runs every store reader on its own thread until the deadline: their findings, and
/// whether any was cut short.
async fn read_sources(
    scope: &Arc<Scope>,
    snapshot: &Arc<procscan::Snapshot>,
    deadline: tokio::time::Instant,
    checked: &mut Vec<String>,
    unavailable: &mut Vec<Unavailable>,
) -> (Vec<Finding>, bool) {
    let mut findings = Vec::new();
    let mut partial = false;
    let mut tasks = Vec::new();
    for (name, reader) in READERS {
        checked.push((*name).into());
        let scope = Arc::clone(scope);
        let snapshot = Arc::clone(snapshot);
        let reader = *reader;
        tasks.push((
            *name,
            tokio::task::spawn_blocking(move || reader(&scope, &snapshot)),
        ));
    }
    for (name, task) in tasks {
        match tokio::time::timeout_at(deadline, task).await {
            Ok(Ok(outcome)) => {
                findings.extend(outcome.findings);
                if let Some(reason) = outcome.unavailable {
                    partial |= matches!(reason, "deadline" | "byteBudget");
                    unavailable.push(Unavailable {
                        source: name.into(),
                        reason: reason.into(),
                    });
                }
            }
            _ => {
                partial = true;
                unavailable.push(Unavailable {
                    source: name.into(),
                    reason: "deadline".into(),
                });
            }
        }
    }
    (findings, partial)
}

/// Runs every source against `scope` until its deadline.
pub async fn detect(mut scope: Scope, include_caller: bool) -> Detection {
    scope.own_session = super::own::session_id().map(str::to_owned);
    let scope = Arc::new(scope);
    let deadline = tokio::time::Instant::from_std(scope.meter.deadline);
    let mut checked: Vec<String> = Vec::new();
    let mut unavailable: Vec<Unavailable> = Vec::new();
    let mut partial = false;

    // The process scan directs the store reads, so it runs first.
    checked.push("process".into());
    let scan = {
        let scope = Arc::clone(&scope);
        tokio::task::spawn_blocking(move || procscan::scan(&scope))
    };
    let snapshot = match tokio::time::timeout_at(deadline, scan).await {
        Ok(Ok(Ok(snapshot))) => snapshot,
        Ok(Ok(Err(reason))) => {
            partial |= reason == "deadline";
            unavailable.push(Unavailable {
                source: "process".into(),
                reason: reason.into(),
            });
            procscan::Snapshot::default()
        }
        _ => {
            partial = true;
            unavailable.push(Unavailable {
                source: "process".into(),
                reason: "deadline".into(),
            });
            procscan::Snapshot::default()
        }
    };
    let snapshot = Arc::new(snapshot);

    let mut findings = snapshot.findings.clone();
    let (read, cut) =
        read_sources(&scope, &snapshot, deadline, &mut checked, &mut unavailable).await;
    findings.extend(read);
    partial |= cut;

    // The second CPU sample, taken after the store reads so some time has passed.
    let busy_by_cpu = {
        let snapshot = Arc::clone(&snapshot);
        tokio::task::spawn_blocking(move || procscan::cpu_busy(&snapshot))
    };
    if let Ok(Ok(busy)) = tokio::time::timeout_at(deadline, busy_by_cpu).await {
        for f in findings.iter_mut() {
            if f.source == Some(Source::Process) && f.pid.is_some_and(|p| busy.contains(&p)) {
                f.busy = true;
            }
        }
    }

    let caller_kind = snapshot.caller_agent.clone().or_else(|| {
        scope
            .caller_client
            .as_deref()
            .and_then(agent_for_client)
            .map(str::to_owned)
    });
    let mut agents = merge(&scope, findings, caller_kind.as_deref());
    let before = agents.len();
    if !include_caller {
        agents.retain(|a| !a.likely_caller);
    }
    let omitted = (before - agents.len()) as u64;
    Detection {
        agents,
        omitted_likely_caller: omitted,
        sources_checked: checked,
        sources_unavailable: unavailable,
        stats: ScanStats {
            processes_scanned: snapshot.scanned,
            store_files_read: scope.meter.files_read.load(Ordering::Relaxed),
            bytes_read: scope.meter.bytes_read.load(Ordering::Relaxed),
            partial,
            budget_ms: 0,
        },
    }
}

/// Groups findings into agents: same pid, then same session, then store findings of a
/// kind with exactly one live process of that kind.
fn merge(scope: &Scope, findings: Vec<Finding>, caller_kind: Option<&str>) -> Vec<Agent> {
    let mut groups: Vec<Vec<Finding>> = Vec::new();
    let mut pending: Vec<Finding> = Vec::new();
    for f in findings {
        if f.source == Some(Source::Process) {
            groups.push(vec![f]);
        } else {
            pending.push(f);
        }
    }
    // Findings that name a process join it.
    let mut rest = Vec::new();
    for f in pending {
        let group = f.pid.and_then(|pid| {
            groups
                .iter_mut()
                .find(|g| g[0].pid == Some(pid) && g[0].agent == f.agent)
        });
        match group {
            Some(g) => g.push(f),
            None => rest.push(f),
        }
    }
    // Findings of one session join each other. A finding naming a process that is not
    // in the repository forms that process's own agent. A pid-less session of a kind with
    // exactly one live process whose own session is unknown joins that process.
    for f in rest {
        if let Some(session) = &f.session
            && let Some(g) = groups
                .iter_mut()
                .find(|g| g.iter().any(|x| x.session.as_ref() == Some(session)))
        {
            g.push(f);
            continue;
        }
        if let Some(pid) = f.pid {
            match groups
                .iter_mut()
                .find(|g| g[0].agent == f.agent && g.iter().any(|x| x.pid == Some(pid)))
            {
                Some(g) => g.push(f),
                None => groups.push(vec![f]),
            }
            continue;
        }
        let live: Vec<usize> = groups
            .iter()
            .enumerate()
            .filter(|(_, g)| {
                g[0].source == Some(Source::Process)
                    && g[0].agent == f.agent
                    && g.iter().all(|x| x.source != Some(Source::Session))
            })
            .map(|(i, _)| i)
            .collect();
        let processes = groups
            .iter()
            .filter(|g| g[0].source == Some(Source::Process) && g[0].agent == f.agent)
            .count();
        if let [only] = live.as_slice()
            && processes == 1
        {
            groups[*only].push(f);
            continue;
        }
        // Store findings of one kind without a process are one agent.
        if let Some(g) = groups
            .iter_mut()
            .find(|g| g[0].agent == f.agent && g.iter().all(|x| x.pid.is_none()))
        {
            g.push(f);
            continue;
        }
        groups.push(vec![f]);
    }
    let mut agents: Vec<Agent> = groups
        .into_iter()
        .filter_map(|g| to_agent(scope, g, caller_kind))
        .collect();
    agents.sort_by(|a, b| {
        a.state
            .cmp(&b.state)
            .then(b.last_activity_ms.cmp(&a.last_activity_ms))
            .then(a.agent.cmp(&b.agent))
            .then(a.pid.cmp(&b.pid))
    });
    agents
}

fn to_agent(scope: &Scope, mut group: Vec<Finding>, caller_kind: Option<&str>) -> Option<Agent> {
    // Newest evidence first, so its branch, tool and files win.
    group.sort_by_key(|f| std::cmp::Reverse(f.last_activity_ms));
    let live = group.iter().any(|f| f.live);
    let last_activity = group.iter().filter_map(|f| f.last_activity_ms).max();
    let busy = group.iter().any(|f| f.busy);
    let state = if busy || last_activity.is_some_and(|t| scope.fresh(t)) {
        State::Working
    } else if live {
        State::Open
    } else if last_activity.is_some_and(|t| scope.recent(t)) {
        State::Recent
    } else {
        return None;
    };
    let sources: BTreeSet<Source> = group.iter().filter_map(|f| f.source).collect();
    let process = group.iter().find(|f| f.source == Some(Source::Process));
    let worktree = process
        .and_then(|p| p.worktree)
        .or_else(|| group.iter().find_map(|f| f.worktree));
    // A live process's worktree HEAD is the current truth; a store's branch is history.
    let branch = process
        .and(worktree)
        .and_then(|w| scope.worktrees[w].branch.clone())
        .or_else(|| {
            group
                .iter()
                .find_map(|f| f.branch.as_deref().and_then(sanitize_branch))
        })
        .or_else(|| worktree.and_then(|w| scope.worktrees[w].branch.clone()));
    let mut files: Vec<String> = Vec::new();
    for f in &group {
        for path in &f.files {
            if files.len() < MAX_FILES && !files.contains(path) {
                files.push(path.clone());
            }
        }
    }
    let agent = group[0].agent.clone();
    Some(Agent {
        same_agent_as_caller: caller_kind == Some(agent.as_str()),
        agent,
        state,
        sources: sources.into_iter().collect(),
        branch,
        last_tool: group.iter().find_map(|f| f.last_tool.clone()),
        files,
        pid: process
            .and_then(|p| p.pid)
            .or_else(|| group.iter().find_map(|f| f.pid)),
        last_activity_ms: last_activity,
        mcp_client: group.iter().find_map(|f| f.mcp_client.clone()),
        likely_caller: group.iter().any(|f| f.likely_caller),
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use super::*;
    use crate::presence::fsread::Meter;

    #[test]
    fn client_names_map_to_agents() {
        assert_eq!(agent_for_client("claude-code"), Some("claude-code"));
        assert_eq!(agent_for_client("Codex-MCP-Client"), Some("codex"));
        assert_eq!(agent_for_client("cursor-agent"), Some("cursor-agent"));
        assert_eq!(agent_for_client("Cursor"), Some("cursor"));
        assert_eq!(agent_for_client("cursor-vscode"), Some("cursor"));
        assert_eq!(agent_for_client("github-copilot-cli"), Some("copilot-cli"));
        assert_eq!(agent_for_client("my-own-host"), None);
    }

    #[test]
    fn paths_are_normalised_without_climbing() {
        assert_eq!(
            normalize(Path::new("/a/./b/../c")),
            Some(PathBuf::from("/a/c"))
        );
        assert_eq!(normalize(Path::new("/..")), None);
        assert_eq!(normalize(Path::new("rel")), None);
    }

    #[test]
    fn tool_names_are_sanitised() {
        assert_eq!(sanitize_tool("apply_patch").as_deref(), Some("apply_patch"));
        assert_eq!(
            sanitize_tool("mcp__x:y.z-1").as_deref(),
            Some("mcp__x:y.z-1")
        );
        assert_eq!(sanitize_tool("rm -rf"), None);
        assert_eq!(sanitize_tool(""), None);
        assert_eq!(sanitize_tool(&"a".repeat(65)), None);
    }

    fn finding(agent: &str, source: Source, pid: Option<u32>, session: &str) -> Finding {
        Finding {
            agent: agent.into(),
            source: Some(source),
            pid,
            session: (!session.is_empty()).then(|| session.to_owned()),
            worktree: Some(0),
            last_activity_ms: Some(1_000),
            live: source == Source::Process,
            ..Finding::default()
        }
    }

    fn test_scope() -> Scope {
        Scope {
            worktrees: vec![Worktree {
                path: "/src/app".into(),
                git_dir: "/src/app/.git".into(),
                branch: Some("main".into()),
            }],
            common_dir: "/src/app/.git".into(),
            home: None,
            dirs: crate::config::UserDirs::default(),
            run_dir: None,
            now_ms: 2_000,
            meter: Meter::new(Instant::now()),
            caller_client: None,
            own_session: None,
        }
    }

    #[test]
    fn findings_merge_by_pid_then_session_then_the_only_process() {
        let scope = test_scope();
        let pids = |agents: &[Agent]| -> Vec<(String, Option<u32>, Vec<Source>)> {
            agents
                .iter()
                .map(|a| (a.agent.clone(), a.pid, a.sources.clone()))
                .collect()
        };
        // A pid-less session joins the only live process of its kind.
        let merged = merge(
            &scope,
            vec![
                finding("codex", Source::Process, Some(10), ""),
                finding("codex", Source::Session, None, "codex:a"),
            ],
            None,
        );
        assert_eq!(
            pids(&merged),
            [(
                "codex".into(),
                Some(10),
                vec![Source::Process, Source::Session]
            )]
        );
        // A process whose own session is known does not take in another session, and a
        // record naming a process outside the repository is that process's agent.
        let merged = merge(
            &scope,
            vec![
                finding("claude-code", Source::Process, Some(10), ""),
                finding("claude-code", Source::Session, Some(10), "claude:own"),
                finding("claude-code", Source::Session, None, "claude:old"),
                finding("claude-code", Source::McpPresence, Some(20), "mcp:x"),
                finding("cursor", Source::McpPresence, None, "mcp:y"),
                finding("cursor", Source::Editor, None, "editor:z"),
            ],
            Some("cursor"),
        );
        let mut got = pids(&merged);
        got.sort();
        assert_eq!(
            got,
            [
                ("claude-code".into(), None, vec![Source::Session]),
                (
                    "claude-code".into(),
                    Some(10),
                    vec![Source::Process, Source::Session]
                ),
                ("claude-code".into(), Some(20), vec![Source::McpPresence]),
                (
                    "cursor".into(),
                    None,
                    vec![Source::Editor, Source::McpPresence]
                ),
            ]
        );
        assert!(
            merged
                .iter()
                .all(|a| a.same_agent_as_caller == (a.agent == "cursor"))
        );
    }

    #[test]
    fn relative_paths_stay_inside_the_worktrees() {
        let scope = Scope {
            worktrees: vec![
                Worktree {
                    path: "/src/app".into(),
                    git_dir: "/src/app/.git".into(),
                    branch: None,
                },
                Worktree {
                    path: "/src/app/.wt/x".into(),
                    git_dir: "/src/app/.git/worktrees/x".into(),
                    branch: None,
                },
            ],
            common_dir: "/src/app/.git".into(),
            home: None,
            dirs: crate::config::UserDirs::default(),
            run_dir: None,
            now_ms: 0,
            meter: Meter::new(Instant::now()),
            caller_client: None,
            own_session: None,
        };
        let cwd = Path::new("/src/app/sub");
        assert_eq!(
            scope.relative(Some(cwd), "x.rs").as_deref(),
            Some("sub/x.rs")
        );
        assert_eq!(
            scope.relative(None, "/src/app/a/b.rs").as_deref(),
            Some("a/b.rs")
        );
        assert_eq!(
            scope.relative(None, "/src/app/.wt/x/y.rs").as_deref(),
            Some("y.rs")
        );
        assert_eq!(scope.relative(Some(cwd), "../../app2/z.rs"), None);
        assert_eq!(scope.relative(None, "/src/app2/z.rs"), None);
        assert_eq!(scope.relative(None, "/home/u/.ssh/config"), None);
        assert_eq!(scope.relative(None, "/src/app"), None);
        assert_eq!(scope.locate(Path::new("/src/app/.wt/x/sub")), Some(1));
        assert_eq!(scope.locate(Path::new("/src/application")), None);
    }
}
