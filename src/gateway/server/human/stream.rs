//! `GET /api/events`: the cards that change, as Server-Sent Events.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::broadcast::error::RecvError;

use super::super::app::{ApiError, App};
use super::super::auth;

/// Comment lines keep idle connections (and proxies' timers) alive.
const PING: Duration = Duration::from_secs(15);

pub async fn events(State(app): State<Arc<App>>, headers: HeaderMap) -> Result<Response, ApiError> {
    auth::authenticate(&app, &headers)?;
    let rx = app.events.subscribe();
    let cards = stream::unfold(rx, |mut rx| async move {
        let event = match rx.recv().await {
            Ok(card) => Event::default().event("card").data(card.to_string()),
            // A page that fell behind reloads its lists.
            Err(RecvError::Lagged(_)) => Event::default().event("reload").data("{}"),
            Err(RecvError::Closed) => return None,
        };
        Some((Ok::<_, Infallible>(event), rx))
    });
    Ok(Sse::new(cards)
        .keep_alive(KeepAlive::new().interval(PING).text("ping"))
        .into_response())
}
