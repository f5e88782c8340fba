//! A repository path as JSON text without losing a byte: a path is bytes, JSON strings
//! are UTF-8. A name that is valid UTF-8 is written as it is; any other (or one that
//! starts with `"`, so the two forms never meet) is written as git quotes it, in C style
//! with octal escapes (`"caf\351.txt"`). [`decode`] turns either back into the bytes.

/// `path` as text: itself when it is UTF-8 and does not start with `"`, else quoted.
pub fn encode(path: &[u8]) -> String {
    match std::str::from_utf8(path) {
        Ok(text) if !text.starts_with('"') => text.to_owned(),
        _ => quoted(path),
    }
}

fn quoted(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    for &b in path {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..0x7f => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// The bytes of a path [`encode`] wrote; `None` for a quoted form that is malformed.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let Some(inner) = text.strip_prefix('"') else {
        return Some(text.as_bytes().to_vec());
    };
    let inner = inner.strip_suffix('"')?.as_bytes();
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let (byte, len) = match *inner.get(i)? {
            b'n' => (b'\n', 1),
            b't' => (b'\t', 1),
            c @ (b'"' | b'\\') => (c, 1),
            b'0'..=b'3' => {
                let digits = std::str::from_utf8(inner.get(i..i + 3)?).ok()?;
                (u8::from_str_radix(digits, 8).ok()?, 3)
            }
            _ => return None,
        };
        out.push(byte);
        i += len;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_comes_back_byte_for_byte() {
        let names: [&[u8]; 7] = [
            b"a.txt",
            "caf\u{e9}.txt".as_bytes(),
            b"caf\xe9.txt",
            b"\"quoted\".txt",
            b"tab\there\nnew\\line",
            b"\x01\x7f\xff",
            b"",
        ];
        for name in names {
            let text = encode(name);
            assert_eq!(decode(&text).as_deref(), Some(name), "{text}");
        }
        assert_eq!(encode(b"caf\xe9.txt"), r#""caf\351.txt""#);
        assert_eq!(encode("café.txt".as_bytes()), "café.txt");
        assert_eq!(decode(r#""bad\q""#), None);
    }
}
