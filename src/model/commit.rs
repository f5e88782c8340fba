//! A commit as the history and commit tools show it.

use schemars::JsonSchema;
use serde::Serialize;

use crate::git::Oid;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryCommit {
    pub oid: Oid,
    pub short_oid: String,
    pub parents: Vec<Oid>,
    pub author_name: String,
    pub author_email: String,
    /// Unix seconds.
    pub author_time: i64,
    pub committer_name: String,
    pub committer_email: String,
    /// Unix seconds.
    pub committer_time: i64,
    pub subject: String,
}
