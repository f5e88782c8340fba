//! Goose: sessions of `sessions.db`.

use std::path::Path;

use super::{SQL_ROWS, data_home, deadline_outcome, epoch_ms, open_sqlite, sql_reason, wal_mtime};
use crate::presence::finding::{Finding, Outcome, Scope, Source};
use crate::presence::procscan::Snapshot;

pub fn goose(scope: &Scope, _snap: &Snapshot) -> Outcome {
    let Some(db) = data_home(scope).map(|d| d.join("goose/sessions/sessions.db")) else {
        return Outcome::default();
    };
    if std::fs::symlink_metadata(&db).is_err() {
        return Outcome::default();
    }
    let result = (|| -> Result<Vec<Finding>, Option<&'static str>> {
        let conn = open_sqlite(&db, &scope.meter).ok_or(Some("unreadable"))?;
        let mut stmt = conn
            .prepare("SELECT id, working_dir, updated_at FROM sessions ORDER BY updated_at DESC LIMIT ?1")
            .map_err(sql_reason)?;
        let rows: Vec<(String, Option<String>, rusqlite::types::Value)> = stmt
            .query_map([SQL_ROWS], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sql_reason)?
            .collect::<Result<_, _>>()
            .map_err(sql_reason)?;
        let wal = wal_mtime(&db);
        let mut findings: Vec<Finding> = Vec::new();
        for (id, dir, updated) in rows {
            let Some(worktree) = dir.as_deref().and_then(|d| scope.locate(Path::new(d))) else {
                continue;
            };
            let mut last = match updated {
                rusqlite::types::Value::Integer(n) => epoch_ms(n),
                rusqlite::types::Value::Real(f) => epoch_ms(f as i64),
                rusqlite::types::Value::Text(t) => text_time_ms(&t).unwrap_or(0),
                _ => 0,
            };
            if findings.is_empty()
                && let Some(w) = wal
            {
                last = last.max(w);
            }
            if !scope.recent(last) {
                continue;
            }
            findings.push(Finding {
                agent: "goose".into(),
                source: Some(Source::Session),
                session: Some(format!("goose:{id}")),
                worktree: Some(worktree),
                last_activity_ms: Some(last),
                ..Finding::default()
            });
        }
        Ok(findings)
    })();
    match result {
        Ok(findings) => deadline_outcome(findings, &scope.meter),
        Err(reason) => Outcome {
            findings: Vec::new(),
            unavailable: reason,
        },
    }
}

/// `YYYY-MM-DD HH:MM:SS` (SQLite's `CURRENT_TIMESTAMP`, UTC) or RFC 3339.
fn text_time_ms(text: &str) -> Option<u64> {
    if let Ok(ts) = text.parse::<jiff::Timestamp>() {
        return u64::try_from(ts.as_millisecond()).ok();
    }
    let civil: jiff::civil::DateTime = text.replace(' ', "T").parse().ok()?;
    let ts = civil.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
    u64::try_from(ts.as_millisecond()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_times() {
        assert_eq!(text_time_ms("1970-01-01 00:00:01"), Some(1000));
        assert_eq!(text_time_ms("1970-01-01T00:00:02Z"), Some(2000));
    }
}
