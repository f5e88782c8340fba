//! Object ids: the one newtype every layer that names a git object shares.

/// A full object id in hex, as git printed it (40 for SHA-1, 64 for SHA-256).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Oid(String);

impl Oid {
    /// Accepts exactly 40 or 64 lowercase hex digits.
    pub fn parse(text: &str) -> Option<Oid> {
        let ok = matches!(text.len(), 40 | 64)
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| Oid(text.to_owned()))
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<Oid> {
        std::str::from_utf8(bytes).ok().and_then(Oid::parse)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for the all-zero id git uses for "no object".
    pub fn is_zero(&self) -> bool {
        self.0.bytes().all(|b| b == b'0')
    }

    pub fn short(&self) -> &str {
        &self.0[..7]
    }
}

impl std::fmt::Display for Oid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
