//! The approval page: static assets compiled into the binary, so the gateway needs no
//! files beside it, no CDN and no build step at install.
//!
//! The page is a shell plus ES modules. It never carries inline script or style, so the
//! listener's `Content-Security-Policy: default-src 'self'` holds without exceptions, and
//! every value it shows from the API goes through `textContent`, never through markup.

/// The page shell, served for `/` and `/login`.
pub const INDEX_HTML: &str = include_str!("index.html");

/// Content type of [`INDEX_HTML`].
pub const HTML_TYPE: &str = "text/html; charset=utf-8";

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";

/// Every asset by its name under `/assets/`. A fixed table: a request can only ever
/// name one of these, never a path on disk.
const ASSETS: [(&str, &str, &str); 11] = [
    ("app.js", JS, include_str!("app.js")),
    ("api.js", JS, include_str!("api.js")),
    ("dom.js", JS, include_str!("dom.js")),
    ("list.js", JS, include_str!("list.js")),
    ("card.js", JS, include_str!("card.js")),
    ("preview.js", JS, include_str!("preview.js")),
    ("preview_history.js", JS, include_str!("preview_history.js")),
    ("preview_refs.js", JS, include_str!("preview_refs.js")),
    ("restore.js", JS, include_str!("restore.js")),
    ("app.css", CSS, include_str!("app.css")),
    ("icon.svg", SVG, include_str!("icon.svg")),
];

/// The asset `path` names — either its bare name (`app.js`) or its URL path
/// (`/assets/app.js`) — as `(content type, body)`, or `None` for anything else.
pub fn asset(path: &str) -> Option<(&'static str, &'static str)> {
    let name = path.strip_prefix("/assets/").unwrap_or(path);
    ASSETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, content_type, body)| (content_type, body))
}

/// The names of every asset, for the listener's routes and for tests.
pub fn asset_names() -> impl Iterator<Item = &'static str> {
    ASSETS.iter().map(|(n, _, _)| *n)
}

#[cfg(test)]
mod tests;
