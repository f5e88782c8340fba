//! What a request is answered with, and its bytes on the wire.
//!
//! Most answers are small JSON trees. A `tools/call` result is not: its structured
//! content is already the compact JSON of the tool's output, and the text block is that
//! same JSON again (as a string) unless the tool renders its own. Building a tree around
//! it would parse, copy and escape the largest part of every answer once more, so a call
//! result is written straight into one buffer, byte for byte what the tree gave.

use std::sync::LazyLock;

use serde_json::Value;
use serde_json::value::RawValue;

use super::jsonrpc::Id;
use super::protocol::{self, Version, meta};
use crate::tools::Rendered;

/// One answer to one request.
pub enum Reply {
    Value(Value),
    Call(CallReply),
}

/// A `tools/call` result in the era it is answered in.
pub struct CallReply {
    pub id: Id,
    pub rendered: Rendered,
    pub is_error: bool,
    pub version: Version,
}

impl From<Value> for Reply {
    fn from(value: Value) -> Reply {
        Reply::Value(value)
    }
}

impl Reply {
    /// The compact JSON of the answer, `extra` bytes of room left at its end (a line
    /// ending, an event-stream trailer) so adding them does not copy the answer.
    pub fn into_bytes(self, extra: usize) -> Vec<u8> {
        match self {
            Reply::Value(value) => {
                let mut out = Vec::with_capacity(128 + extra);
                // Writing a `Value` into memory cannot fail.
                let _ = serde_json::to_writer(&mut out, &value);
                out
            }
            Reply::Call(call) => call.into_bytes(extra),
        }
    }
}

impl CallReply {
    /// `{"jsonrpc":"2.0","id":…,"result":{"content":[{"type":"text","text":…}],
    /// "structuredContent":…,"isError":…}}`, with `resultType` and `_meta` after them
    /// in the modern era: the key order `protocol` gave when this was a tree.
    ///
    /// A failed call's payload travels as text only (see [`protocol::call_result`]).
    fn into_bytes(self, extra: usize) -> Vec<u8> {
        let structured: &RawValue = &self.rendered.structured;
        let text = self.rendered.text();
        let with_structured = self.version.has_structured_output() && !self.is_error;
        // The text is escaped once more inside a string: a little over its length.
        let room = text.len() + text.len() / 8 + structured.get().len() + 256 + extra;
        let mut out = Vec::with_capacity(room);
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        // An id is a string or a number, and a string always serializes.
        let _ = serde_json::to_writer(&mut out, &self.id);
        out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
        let _ = serde_json::to_writer(&mut out, text);
        out.extend_from_slice(b"}]");
        if with_structured {
            out.extend_from_slice(br#","structuredContent":"#);
            out.extend_from_slice(structured.get().as_bytes());
        }
        out.extend_from_slice(br#","isError":"#);
        out.extend_from_slice(if self.is_error { b"true" } else { b"false" });
        if self.version.is_modern() {
            out.extend_from_slice(br#","resultType":"complete","_meta":"#);
            out.extend_from_slice(MODERN_META.as_bytes());
        }
        out.extend_from_slice(b"}}");
        out
    }
}

/// The `_meta` every modern result carries, written once.
static MODERN_META: LazyLock<String> = LazyLock::new(|| {
    let meta = serde_json::json!({ meta::SERVER_INFO: protocol::server_info() });
    crate::tools::compact(&meta)
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools;

    /// The tree the call result used to be, to compare the written bytes with.
    fn tree(call: &CallReply) -> Value {
        let structured: Value = serde_json::from_str(call.rendered.structured.get()).unwrap();
        let result = protocol::call_result(
            call.rendered.text().to_owned(),
            structured,
            call.is_error,
            call.version,
        );
        let result = if call.version.is_modern() {
            protocol::modern_result(result)
        } else {
            result
        };
        super::super::jsonrpc::result(call.id.clone(), result)
    }

    #[test]
    fn a_call_result_is_the_bytes_its_tree_gave_in_every_era() {
        let output = serde_json::json!({
            "repoPath": "/r/é \"q\"\n",
            "commits": [{"subject": "a\u{1}b\\", "n": 1.5, "z": null}],
            "more": true,
        });
        for version in Version::ALL {
            for is_error in [false, true] {
                for text in [None, Some("own text\n\"quoted\"".to_owned())] {
                    for id in [serde_json::json!(7), serde_json::json!("a\"b")] {
                        let call = CallReply {
                            id,
                            rendered: Rendered {
                                structured: tools::raw(&output).unwrap(),
                                text: text.clone(),
                            },
                            is_error,
                            version,
                        };
                        let want = tools::compact(&tree(&call));
                        let got = String::from_utf8(Reply::Call(call).into_bytes(1)).unwrap();
                        assert_eq!(got, want, "{version:?} error={is_error} text={text:?}");
                    }
                }
            }
        }
    }
}
