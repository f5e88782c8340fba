//! The page and its assets, embedded in the binary ([`super::super::ui`]).

use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::super::app::ApiError;
use super::super::ui;

/// `GET /` and `GET /login`: the same shell; the page logs in from the URL fragment.
pub async fn index() -> Response {
    ([(header::CONTENT_TYPE, ui::HTML_TYPE)], ui::INDEX_HTML).into_response()
}

pub async fn asset(Path(name): Path<String>) -> Response {
    match ui::asset(&name) {
        Some((content_type, body)) => {
            ([(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        None => ApiError::not_found().into_response(),
    }
}
