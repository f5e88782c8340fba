//! Canonical JSON: the exact bytes that entry hashes and signatures cover.
//!
//! Every object's keys are sorted by their UTF-8 bytes, recursively; arrays keep their
//! order; output is compact; strings and numbers are written as serde_json writes them.
//! `serde_json` keeps insertion order in this build (`preserve_order`), so the sort is
//! explicit rather than inherited from a `BTreeMap`.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The canonical bytes of `value`.
pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(value, &mut out);
    out
}

/// The canonical bytes of `object` with the top-level keys in `skip` left out.
pub fn object_without(object: &Map<String, Value>, skip: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    write_object(object, skip, &mut out);
    out
}

fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => write_object(map, &[], out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        scalar => write_scalar(scalar, out),
    }
}

fn write_object(map: &Map<String, Value>, skip: &[&str], out: &mut Vec<u8>) {
    // `str` ordering is byte-wise lexicographic, which is exactly UTF-8 byte order.
    let mut keys: Vec<&String> = map.keys().filter(|k| !skip.contains(&k.as_str())).collect();
    keys.sort_unstable();
    out.push(b'{');
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(key, out);
        out.push(b':');
        write_value(&map[key.as_str()], out);
    }
    out.push(b'}');
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail");
}

fn write_scalar(value: &Value, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, value).expect("writing to a Vec cannot fail");
}

/// `sha256:` followed by the lowercase hex SHA-256 of `bytes`.
pub fn sha256_tag(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    push_hex(&mut out, &digest);
    out
}

/// Appends lowercase hex of `bytes`.
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0xf)] as char);
    }
}

/// True for `sha256:` followed by exactly 64 lowercase hex digits.
pub fn is_sha256_tag(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(v: &Value) -> String {
        String::from_utf8(to_vec(v)).unwrap()
    }

    #[test]
    fn keys_sort_by_utf8_bytes_at_every_depth() {
        let v: Value = serde_json::from_str(
            r#"{"b":1,"a":{"z":[3,{"y":1,"x":2}],"é":0,"Z":0,"aa":0,"a":0},"A":null}"#,
        )
        .unwrap();
        // 'A' (0x41) < 'Z' < 'a' < 'aa' < 'z' < 'é' (0xC3 0xA9): byte order, not locale.
        assert_eq!(
            canon(&v),
            r#"{"A":null,"a":{"Z":0,"a":0,"aa":0,"z":[3,{"x":2,"y":1}],"é":0},"b":1}"#
        );
    }

    #[test]
    fn astral_keys_sort_by_bytes_not_utf16_units() {
        // U+FF61 (EF BD A1) sorts before U+1F600 (F0 9F 98 80) in UTF-8; UTF-16 order
        // would put the surrogate pair (D83D) first.
        let v = json!({ "\u{1F600}": 1, "\u{FF61}": 2 });
        assert_eq!(canon(&v), "{\"\u{FF61}\":2,\"\u{1F600}\":1}");
    }

    #[test]
    fn strings_and_numbers_use_serde_json_formatting() {
        let v = json!({
            "s": "quote\" backslash\\ newline\n tab\t nul\u{0} del\u{7f} é /",
            "n": [0, -1, 18446744073709551615u64, -9223372036854775808i64, 1.5, 1e300, 0.1],
            "b": [true, false, null],
            "e": {}, "ea": [],
        });
        let expected = concat!(
            r#"{"b":[true,false,null],"e":{},"ea":[],"#,
            r#""n":[0,-1,18446744073709551615,-9223372036854775808,1.5,1e+300,0.1],"#,
            r#""s":"quote\" backslash\\ newline\n tab\t nul\u0000 del"#,
            "\u{7f} \u{e9} /\"}",
        );
        assert_eq!(canon(&v), expected);
    }

    #[test]
    fn skipped_keys_are_top_level_only() {
        let v = json!({ "signature": "x", "keep": { "signature": "inner" }, "a": 1 });
        let Value::Object(map) = &v else {
            unreachable!()
        };
        assert_eq!(
            String::from_utf8(object_without(map, &["signature"])).unwrap(),
            r#"{"a":1,"keep":{"signature":"inner"}}"#
        );
    }

    #[test]
    fn insertion_order_does_not_matter() {
        let a: Value = serde_json::from_str(r#"{"x":1,"y":{"q":1,"p":2}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"y":{"p":2,"q":1},"x":1}"#).unwrap();
        assert_eq!(to_vec(&a), to_vec(&b));
    }

    #[test]
    fn sha256_tags() {
        assert_eq!(
            sha256_tag(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(is_sha256_tag(&sha256_tag(b"abc")));
        assert!(!is_sha256_tag(
            "sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"
        ));
        assert!(!is_sha256_tag("sha256:00"));
        assert!(!is_sha256_tag("md5:00"));
    }
}
