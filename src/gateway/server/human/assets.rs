//! The page and its assets, embedded in the binary.

use axum::extract::Path;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

use super::super::app::ApiError;

/// A minimal page until the full one is embedded: it says how to log in.
const INDEX_HTML: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>gitward gateway</title></head><body><h1>gitward gateway</h1>\
<p>Open the login link the gateway printed at start.</p></body></html>\n";

/// `GET /` and `GET /login`: the same shell; the page logs in from the URL fragment.
pub async fn index() -> Html<&'static str> {
    Html(INDEX_HTML)
}

/// An embedded asset by name.
fn find(_name: &str) -> Option<(&'static str, &'static str)> {
    None
}

pub async fn asset(Path(name): Path<String>) -> Response {
    match find(&name) {
        Some((content_type, body)) => {
            ([(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        None => ApiError::not_found().into_response(),
    }
}
