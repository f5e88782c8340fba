//! OpenCode: sessions and tool parts of `opencode.db`.

use std::path::{Path, PathBuf};

use super::{
    SQL_ROWS, Summary, data_home, deadline_outcome, epoch_ms, open_sqlite, sql_reason, wal_mtime,
};
use crate::presence::finding::{Finding, Outcome, Scope, Source};
use crate::presence::procscan::Snapshot;

/// A tool part: tool name, status, `filePath` input, update time.
type ToolPart = (Option<String>, Option<String>, Option<String>, i64);

pub fn opencode(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(db) = scope
        .dirs
        .opencode_db
        .clone()
        .or_else(|| Some(data_home(scope)?.join("opencode").join("opencode.db")))
    else {
        return Outcome::default();
    };
    if std::fs::symlink_metadata(&db).is_err() {
        return Outcome::default();
    }
    match opencode_sessions(scope, &db) {
        Ok(findings) => deadline_outcome(findings, &scope.meter),
        Err(reason) => Outcome {
            findings: Vec::new(),
            unavailable: reason,
        },
    }
}

fn opencode_sessions(scope: &Scope, db: &Path) -> Result<Vec<Finding>, Option<&'static str>> {
    let conn = open_sqlite(db, &scope.meter).ok_or(Some("unreadable"))?;
    let mut sessions = conn
        .prepare(
            "SELECT id, directory, time_updated FROM session ORDER BY time_updated DESC LIMIT ?1",
        )
        .map_err(sql_reason)?;
    let rows: Vec<(String, String, i64)> = sessions
        .query_map([SQL_ROWS], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(sql_reason)?
        .collect::<Result<_, _>>()
        .map_err(sql_reason)?;
    // Tool parts through json_extract, so outputs and metadata never leave SQLite.
    let mut parts = conn
        .prepare(
            "SELECT json_extract(data, '$.tool'), json_extract(data, '$.state.status'), \
                    json_extract(data, '$.state.input.filePath'), time_updated \
             FROM part WHERE session_id = ?1 AND length(data) < 8388608 \
               AND json_extract(data, '$.type') = 'tool' \
             ORDER BY time_updated DESC LIMIT 20",
        )
        .map_err(sql_reason)?;
    let wal = wal_mtime(db);
    let mut findings = Vec::new();
    for (id, directory, updated) in rows {
        let dir = PathBuf::from(&directory);
        let Some(worktree) = scope.locate(&dir) else {
            continue;
        };
        let mut last = epoch_ms(updated);
        if !scope.recent(last) {
            continue;
        }
        let mut s = Summary::default();
        let tools: Vec<ToolPart> = parts
            .query_map([&id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(sql_reason)?
            .collect::<Result<_, _>>()
            .map_err(sql_reason)?;
        for (tool, status, file, at) in tools {
            s.tool(tool.as_deref());
            s.running |= matches!(status.as_deref(), Some("running" | "pending"));
            if let Some(file) = file {
                s.paths.push((Some(dir.clone()), file));
            }
            last = last.max(epoch_ms(at));
        }
        // The newest session in the repository owns recent WAL writes.
        if findings.is_empty()
            && let Some(w) = wal
        {
            last = last.max(w);
        }
        findings.push(Finding {
            agent: "opencode".into(),
            source: Some(Source::Session),
            session: Some(format!("opencode:{id}")),
            worktree: Some(worktree),
            last_tool: s.last_tool.clone(),
            files: s.files(scope, Some(&dir)),
            last_activity_ms: Some(last),
            busy: s.running && scope.recent(last) && scope.fresh(last),
            ..Finding::default()
        });
        if findings.len() >= 8 {
            break;
        }
    }
    Ok(findings)
}
