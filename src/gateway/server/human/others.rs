//! `otherAgents` on a card: the other coding agents working in the proposal's repository
//! (the same detection as `agents.presence`), with the proposal's paths they touched too.
//!
//! Detection starts once the proposal has been answered and stored, so it never delays
//! the `202` nor changes a decision; its finding is stored with the proposal and streamed
//! into the card when ready.

use std::sync::Arc;
use std::time::Duration;

use super::super::app::App;
use super::super::events;
use crate::git::Repo;
use crate::presence::overlap::{self, Viewer};

/// The detection budget. Nobody waits for it, but a card without its finding for long
/// is a card a person may already be deciding on.
const BUDGET: Duration = Duration::from_millis(500);

/// Detects the other agents in `repo` for the new proposal `id` of `agent_id`, which
/// names `paths`, then stores the finding and streams the card.
pub fn spawn(app: Arc<App>, id: String, repo: Arc<Repo>, agent_id: String, paths: Vec<String>) {
    tokio::spawn(async move {
        let viewer = Viewer::Proposer(agent_id);
        let config = Arc::clone(&app.config);
        let Some(found) = overlap::other_agents(config, repo, viewer, paths, BUDGET).await else {
            return;
        };
        let Ok(value) = serde_json::to_value(found) else {
            return;
        };
        let stored = app
            .store
            .run({
                let id = id.clone();
                move |s| s.set_other_agents(&id, &value)
            })
            .await;
        match stored {
            Ok(()) => {
                let _ = events::publish(&app, &id).await;
            }
            Err(e) => eprintln!("gitward gateway: storing the other agents of {id}: {e}"),
        }
    });
}
