//! What the approval page shows beside the lifecycle — the pins and the card's preview,
//! computed after the proposal is stored — and the audit follower's cursor.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::rows;
use super::{Store, StoreError};

/// A proposal's pins and preview; `None` while still being computed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardData {
    pub pins: Option<Value>,
    pub preview: Option<Value>,
}

impl Store {
    /// Records the pins and preview of `id` (once computed; a later call replaces them).
    pub fn set_card_data(&mut self, id: &str, data: &CardData) -> Result<(), StoreError> {
        let pins = data.pins.as_ref().map(rows::to_json).transpose()?;
        let preview = data.preview.as_ref().map(rows::to_json).transpose()?;
        // Unsynced: a preview lost in a power cut is computed again at start, from the
        // pins stored (synced) with the proposal.
        let changed = self.unsynced(|conn| {
            Ok(conn.execute(
                "UPDATE proposals SET pins_json = ?2, preview_json = ?3 WHERE preview_id = ?1",
                params![id, pins, preview],
            )?)
        })?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                preview_id: id.to_owned(),
            });
        }
        Ok(())
    }

    /// The pins and preview of `id`.
    pub fn card_data(&self, id: &str) -> Result<CardData, StoreError> {
        let raw: Option<(Option<String>, Option<String>)> = self
            .conn
            .query_row(
                "SELECT pins_json, preview_json FROM proposals WHERE preview_id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let (pins, preview) = raw.ok_or_else(|| StoreError::NotFound {
            preview_id: id.to_owned(),
        })?;
        Ok(CardData {
            pins: pins.as_deref().map(rows::json).transpose()?,
            preview: preview.as_deref().map(rows::json).transpose()?,
        })
    }

    /// The last transition `seq` the audit ledger holds (0 before the first).
    pub fn audit_cursor(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT seq FROM audit_cursor WHERE id = 1", [], |r| {
                r.get(0)
            })
            .optional()?
            .unwrap_or(0))
    }

    /// Moves the audit cursor forward to `seq` (never back).
    pub fn set_audit_cursor(&mut self, seq: i64) -> Result<(), StoreError> {
        // Unsynced: a cursor lost in a power cut only has the follower audit those
        // transitions again, each entry naming its `transitionSeq`.
        self.unsynced(|conn| {
            conn.execute(
                "INSERT INTO audit_cursor (id, seq) VALUES (1, ?1)
                 ON CONFLICT (id) DO UPDATE SET seq = max(seq, ?1)",
                [seq],
            )?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{fresh, new_pending};
    use super::*;

    #[test]
    fn card_data_round_trips_and_the_cursor_only_moves_forward() {
        let (_dir, mut store) = fresh();
        let id = new_pending(&mut store, 1, "a").preview_id;
        assert_eq!(store.card_data(&id).unwrap(), CardData::default());
        let data = CardData {
            pins: Some(json!({"head": "abc"})),
            preview: Some(json!({"files": []})),
        };
        store.set_card_data(&id, &data).unwrap();
        assert_eq!(store.card_data(&id).unwrap(), data);
        assert!(matches!(
            store.set_card_data("nope", &data),
            Err(StoreError::NotFound { .. })
        ));
        assert_eq!(store.audit_cursor().unwrap(), 0);
        store.set_audit_cursor(5).unwrap();
        store.set_audit_cursor(3).unwrap();
        assert_eq!(store.audit_cursor().unwrap(), 5);
    }

    #[test]
    fn derived_rows_leave_the_connection_syncing_every_commit() {
        let (_dir, mut store) = fresh();
        let id = new_pending(&mut store, 1, "a").preview_id;
        let synchronous = |store: &Store| -> i64 {
            store
                .conn
                .query_row("PRAGMA synchronous", [], |r| r.get(0))
                .unwrap()
        };
        const FULL: i64 = 2;
        assert_eq!(synchronous(&store), FULL);
        store.set_card_data(&id, &CardData::default()).unwrap();
        assert_eq!(synchronous(&store), FULL);
        assert!(store.set_card_data("nope", &CardData::default()).is_err());
        assert_eq!(synchronous(&store), FULL);
        store.set_audit_cursor(1).unwrap();
        assert_eq!(synchronous(&store), FULL);
        assert!(store.is_sound());
    }
}
