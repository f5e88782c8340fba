//! Amp: local thread files.

use serde::Deserialize;

use super::{MAX_FILES_PER_AGENT, data_home, deadline_outcome, newest_files};
use crate::presence::finding::{Finding, Outcome, Scope, Source};
use crate::presence::fsread;
use crate::presence::procscan::Snapshot;

#[derive(Deserialize)]
struct AmpThread {
    env: Option<AmpEnv>,
}

#[derive(Deserialize)]
struct AmpEnv {
    initial: Option<AmpInitial>,
}

#[derive(Deserialize)]
struct AmpInitial {
    #[serde(default)]
    trees: Vec<AmpTree>,
}

#[derive(Deserialize)]
struct AmpTree {
    uri: Option<String>,
}

/// Local thread files (`threads/T-*.json`, kept until threads moved server-side): the
/// working directory from `env.initial.trees[0].uri`; messages are skipped unparsed.
pub fn amp(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(dir) = data_home(scope).map(|d| d.join("amp/threads")) else {
        return Outcome::default();
    };
    let files = newest_files(
        scope,
        &dir,
        |n| n.starts_with("T-") && n.ends_with(".json"),
        MAX_FILES_PER_AGENT,
    );
    let mut findings = Vec::new();
    for (mtime, path) in files {
        if scope.meter.spent() {
            break;
        }
        let Some(thread) = fsread::read_small_metered(&path, 8 * 1024 * 1024, &scope.meter)
            .and_then(|b| serde_json::from_slice::<AmpThread>(&b).ok())
        else {
            continue;
        };
        let root = thread
            .env
            .and_then(|e| e.initial)
            .and_then(|i| i.trees.into_iter().next())
            .and_then(|t| t.uri)
            .and_then(|u| crate::presence::editors::file_uri_path(&u));
        let Some(worktree) = root.as_deref().and_then(|r| scope.locate(r)) else {
            continue;
        };
        findings.push(Finding {
            agent: "amp".into(),
            source: Some(Source::Session),
            session: Some(format!("amp:{}", path.display())),
            worktree: Some(worktree),
            last_activity_ms: Some(mtime),
            ..Finding::default()
        });
    }
    deadline_outcome(findings, &scope.meter)
}
