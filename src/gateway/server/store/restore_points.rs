//! Restore-point metadata: which repository, which proposal, when, and what was captured
//! or skipped (the refs themselves live in the repository under `refs/gitward/restore/`).

use jiff::Timestamp;
use rusqlite::{OptionalExtension, Row, params};
use serde_json::Value;

use super::rows::{self, millis};
use super::{Store, StoreError};

/// One restore point's metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct RestorePoint {
    /// `rp_` and a short name (see [`is_restore_point_id`]).
    pub id: String,
    pub repo_path: String,
    /// The proposal it was taken for, if any (a restore of a restore has none).
    pub preview_id: Option<String>,
    pub operation_type: Option<String>,
    pub created_at: Timestamp,
    /// What was captured (refs, index, worktree tree, operation state), as JSON.
    pub captured: Value,
    /// What was left out and why (size and count caps), as JSON — never silent.
    pub skipped: Value,
}

/// True for `rp_` followed by 1–64 of `[A-Za-z0-9_-]`.
///
/// The id becomes a ref name component (`refs/gitward/restore/<id>/…`) and a URL path
/// segment, so nothing that git or a URL would read specially can be in it.
pub fn is_restore_point_id(id: &str) -> bool {
    id.strip_prefix("rp_").is_some_and(|rest| {
        (1..=64).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

const COLUMNS: &str =
    "id, repo_path, preview_id, operation_type, created_at, captured_json, skipped_json";

type Raw = (
    String,
    String,
    Option<String>,
    Option<String>,
    i64,
    String,
    String,
);

fn read(r: &Row<'_>) -> rusqlite::Result<Raw> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
    ))
}

fn convert(raw: Raw) -> Result<RestorePoint, StoreError> {
    let (id, repo_path, preview_id, operation_type, created_at, captured, skipped) = raw;
    Ok(RestorePoint {
        id,
        repo_path,
        preview_id,
        operation_type,
        created_at: rows::timestamp(created_at)?,
        captured: rows::json(&captured)?,
        skipped: rows::json(&skipped)?,
    })
}

impl Store {
    /// Records a restore point. Its id must be new and well formed.
    pub fn insert_restore_point(&mut self, point: &RestorePoint) -> Result<(), StoreError> {
        if !is_restore_point_id(&point.id) {
            return Err(StoreError::Invalid {
                field: "restorePointId",
                reason: "expected rp_ and 1-64 of [A-Za-z0-9_-]".into(),
            });
        }
        self.conn.execute(
            &format!("INSERT INTO restore_points ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
            params![
                point.id,
                point.repo_path,
                point.preview_id,
                point.operation_type,
                millis(point.created_at),
                rows::to_json(&point.captured)?,
                rows::to_json(&point.skipped)?,
            ],
        )?;
        Ok(())
    }

    /// The restore point `id`, if recorded.
    pub fn restore_point(&self, id: &str) -> Result<Option<RestorePoint>, StoreError> {
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM restore_points WHERE id = ?1"),
                [id],
                read,
            )
            .optional()?
            .map(convert)
            .transpose()
    }

    /// The newest `limit` restore points of `repo_path`, newest first.
    pub fn list_restore_points(
        &self,
        repo_path: &str,
        limit: u32,
    ) -> Result<Vec<RestorePoint>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM restore_points WHERE repo_path = ?1
             ORDER BY created_at DESC, id DESC LIMIT ?2"
        ))?;
        let raws = stmt
            .query_map(params![repo_path, limit], read)?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter().map(convert).collect()
    }

    /// Replaces what the restore point `id` records as captured (its after-state is added
    /// once the write it guards is done).
    pub fn update_restore_point_captured(
        &mut self,
        id: &str,
        captured: &Value,
    ) -> Result<bool, StoreError> {
        Ok(self.conn.execute(
            "UPDATE restore_points SET captured_json = ?2 WHERE id = ?1",
            params![id, rows::to_json(captured)?],
        )? == 1)
    }

    /// Every restore point of `repo_path`, newest first (retention walks them all).
    pub fn all_restore_points(&self, repo_path: &str) -> Result<Vec<RestorePoint>, StoreError> {
        self.list_restore_points(repo_path, u32::MAX)
    }

    /// Forgets the restore point `id` (retention pruning, after its refs are deleted).
    pub fn delete_restore_point(&mut self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .execute("DELETE FROM restore_points WHERE id = ?1", [id])?
            == 1)
    }
}
