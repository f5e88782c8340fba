//! The `repo.history` cursor: where a walk started and how far it has come, so a page
//! stays put while new commits arrive.

use crate::error::ToolError;
use crate::git::Oid;

/// Cursor text: base64url of `v1:<start oid>:<skip>`.
const CURSOR_VERSION: &str = "v1";

pub fn encode(start: &Oid, skip: u64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{CURSOR_VERSION}:{start}:{skip}"))
}

pub fn decode(text: &str) -> Result<(Oid, u64), ToolError> {
    use base64::Engine;
    let bad = || {
        ToolError::invalid(
            "cursor",
            "is not a cursor this tool returned (pass nextCursor unchanged)",
        )
    };
    if text.len() > 256 {
        return Err(bad());
    }
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| bad())?;
    let raw = String::from_utf8(raw).map_err(|_| bad())?;
    let mut parts = raw.split(':');
    let (Some(CURSOR_VERSION), Some(oid), Some(skip), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let oid = Oid::parse(oid).ok_or_else(bad)?;
    if skip.is_empty() || !skip.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let skip = skip.parse::<u64>().map_err(|_| bad())?;
    Ok((oid, skip))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let oid = Oid::parse(&"ab".repeat(20)).unwrap();
        let text = encode(&oid, 50);
        assert_eq!(decode(&text).unwrap(), (oid, 50));
        use base64::Engine;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        for bad in [
            "50".to_owned(),
            "!!!".to_owned(),
            enc("v1:abc:5"),
            enc(&format!("v2:{}:5", "ab".repeat(20))),
            enc(&format!("v1:{}:-5", "ab".repeat(20))),
            enc(&format!("v1:{}:5:6", "ab".repeat(20))),
            enc(&format!("v1:{}:", "ab".repeat(20))),
        ] {
            assert_eq!(decode(&bad).unwrap_err().code, -32602, "{bad}");
        }
    }
}
