//! What the gateway learnt about a proposal from the repository: the preconditions pinned
//! when it arrived and the preview shown on its card. Both are the operation type's own
//! JSON, written once each (a preview may follow the pins later) and read by the executor
//! and the page.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::rows;
use super::{Store, StoreError};

impl Store {
    /// Records the pins of proposal `id`.
    pub fn set_pins(&mut self, id: &str, pins: &Value) -> Result<(), StoreError> {
        self.set_column(id, "pins_json", pins)
    }

    /// Records the identity of the repository proposal `id` was made for.
    pub fn set_identity(&mut self, id: &str, identity: &Value) -> Result<(), StoreError> {
        self.set_column(id, "identity_json", identity)
    }

    /// The identity of the repository proposal `id` was made for, if recorded.
    pub fn identity(&self, id: &str) -> Result<Option<Value>, StoreError> {
        self.column(id, "identity_json")
    }

    /// Records the preview of proposal `id`.
    pub fn set_preview(&mut self, id: &str, preview: &Value) -> Result<(), StoreError> {
        self.set_column(id, "preview_json", preview)
    }

    /// The pins of proposal `id`, if recorded.
    pub fn pins(&self, id: &str) -> Result<Option<Value>, StoreError> {
        self.column(id, "pins_json")
    }

    /// The preview of proposal `id`, if computed.
    pub fn preview(&self, id: &str) -> Result<Option<Value>, StoreError> {
        self.column(id, "preview_json")
    }

    fn set_column(&mut self, id: &str, column: &str, value: &Value) -> Result<(), StoreError> {
        let changed = self.conn.execute(
            &format!("UPDATE proposals SET {column} = ?2 WHERE preview_id = ?1"),
            params![id, rows::to_json(value)?],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                preview_id: id.to_owned(),
            });
        }
        Ok(())
    }

    fn column(&self, id: &str, column: &str) -> Result<Option<Value>, StoreError> {
        let text: Option<Option<String>> = self
            .conn
            .query_row(
                &format!("SELECT {column} FROM proposals WHERE preview_id = ?1"),
                [id],
                |r| r.get(0),
            )
            .optional()?;
        match text {
            None => Err(StoreError::NotFound {
                preview_id: id.to_owned(),
            }),
            Some(None) => Ok(None),
            Some(Some(t)) => rows::json(&t).map(Some),
        }
    }
}
