//! The operation's own side of a proposal: its fields' validation before the card opens,
//! and the pins and preview computed after the `202`, streamed into the card when ready.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::app::{ApiError, App};

/// Checks the operation's own fields.
pub fn validate(_kind: &str, _fields: &Map<String, Value>) -> Result<(), ApiError> {
    Ok(())
}

/// Computes the pins and preview of the new proposal `id` in the background.
pub fn spawn(_app: Arc<App>, _id: String) {}
