//! The other agents found in a proposal's repository when it arrived, kept beside the
//! proposal so every reading of its card shows the same finding.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::rows;
use super::{Store, StoreError};

impl Store {
    /// Records what detection found for `id` (a later call replaces it).
    pub fn set_other_agents(&mut self, id: &str, others: &Value) -> Result<(), StoreError> {
        let text = rows::to_json(others)?;
        let changed = self.conn.execute(
            "UPDATE proposals SET others_json = ?2 WHERE preview_id = ?1",
            params![id, text],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                preview_id: id.to_owned(),
            });
        }
        Ok(())
    }

    /// What detection found for `id`; `None` before it finished, or when it was off.
    pub fn other_agents(&self, id: &str) -> Result<Option<Value>, StoreError> {
        let raw: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT others_json FROM proposals WHERE preview_id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()?;
        let raw = raw.ok_or_else(|| StoreError::NotFound {
            preview_id: id.to_owned(),
        })?;
        raw.as_deref().map(rows::json).transpose()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{fresh, new_pending};
    use super::*;

    #[test]
    fn other_agents_round_trip_beside_the_card_data() {
        let (_dir, mut store) = fresh();
        let id = new_pending(&mut store, 1, "a").preview_id;
        assert_eq!(store.other_agents(&id).unwrap(), None);
        let found = json!({"agents": [{"agent": "codex"}], "agentCount": 1});
        store.set_other_agents(&id, &found).unwrap();
        // Storing the preview later leaves the finding alone.
        store
            .set_card_data(&id, &super::super::CardData::default())
            .unwrap();
        assert_eq!(store.other_agents(&id).unwrap(), Some(found.clone()));
        assert!(matches!(
            store.set_other_agents("nope", &found),
            Err(StoreError::NotFound { .. })
        ));
        assert!(matches!(
            store.other_agents("nope"),
            Err(StoreError::NotFound { .. })
        ));
    }
}
