//! Where a proposal's card is: the approval page of the gateway the sidecar proposes to,
//! plus the proposal's id.
//!
//! The gateway writes `<runDir>/gateway/ui.json` when it starts: its page's URL and its
//! handshake address. The link is made only when that file names the handshake address
//! this sidecar is configured with (the same gateway, not one started last elsewhere)
//! and a loopback page. It carries no secret: the page still needs its own login session,
//! and the proposal id rides in the fragment, which never reaches a server.

use std::path::Path;

use serde_json::Value;

use super::addr::GatewayAddr;
use super::api;

/// The most read of `ui.json` (a few dozen bytes in practice).
const MAX_UI_FILE: u64 = 4096;

/// The card of `preview_id` on the page of the gateway at `handshake`, when `run_dir`
/// says where that page is.
pub fn card_url(run_dir: &Path, handshake: &GatewayAddr, preview_id: &str) -> Option<String> {
    if !api::is_canonical_preview_id(preview_id) {
        return None;
    }
    let bytes = crate::safe_file::read_in(run_dir, "gateway/ui.json", MAX_UI_FILE).ok()?;
    let ui: Value = serde_json::from_slice(&bytes).ok()?;
    let named = GatewayAddr::parse(ui.get("handshake")?.as_str()?).ok()?;
    if named.socket() != handshake.socket() {
        return None;
    }
    let page = GatewayAddr::parse(ui.get("ui")?.as_str()?).ok()?;
    Some(format!("{}#proposal={preview_id}", page.url("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "7d0f5e0a-3c1b-4b8e-9a52-0c1d2e3f4a5b";

    fn run_dir(ui: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("gateway")).unwrap();
        std::fs::write(dir.path().join("gateway/ui.json"), ui).unwrap();
        dir
    }

    fn at(addr: &str) -> GatewayAddr {
        GatewayAddr::parse(addr).unwrap()
    }

    #[test]
    fn the_link_is_the_page_of_the_same_gateway_with_the_id_in_the_fragment() {
        let dir = run_dir(r#"{"ui":"http://127.0.0.1:4001/","handshake":"127.0.0.1:4000"}"#);
        assert_eq!(
            card_url(dir.path(), &at("localhost:4000"), ID).as_deref(),
            Some("http://127.0.0.1:4001/#proposal=7d0f5e0a-3c1b-4b8e-9a52-0c1d2e3f4a5b")
        );
    }

    #[test]
    fn no_link_for_another_gateway_a_foreign_page_or_an_odd_id() {
        let dir = run_dir(r#"{"ui":"http://127.0.0.1:4001/","handshake":"127.0.0.1:4000"}"#);
        assert_eq!(card_url(dir.path(), &at("127.0.0.1:4999"), ID), None);
        assert_eq!(card_url(dir.path(), &at("127.0.0.1:4000"), "../x"), None);
        for ui in [
            r#"{"ui":"http://example.com:80/","handshake":"127.0.0.1:4000"}"#,
            r#"{"ui":"http://user:pw@127.0.0.1:4001/","handshake":"127.0.0.1:4000"}"#,
            r#"{"ui":"http://127.0.0.1:4001/login#token","handshake":"127.0.0.1:4000"}"#,
            r#"{"handshake":"127.0.0.1:4000"}"#,
            "not json",
        ] {
            let dir = run_dir(ui);
            assert_eq!(
                card_url(dir.path(), &at("127.0.0.1:4000"), ID),
                None,
                "{ui}"
            );
        }
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(card_url(empty.path(), &at("127.0.0.1:4000"), ID), None);
    }
}
