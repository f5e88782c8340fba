//! A spec tool's answer: the workflow state, and the instruction that goes with it.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::specs::SpecError;

/// A spec tool's answer: the state, and whether the instruction goes with it.
pub struct SpecReply {
    pub state: Value,
    pub include_instruction: bool,
}

impl SpecReply {
    pub(super) fn new(state: Value, include: Option<bool>) -> Self {
        SpecReply {
            state,
            include_instruction: include.unwrap_or(true),
        }
    }

    pub(super) fn errors(errors: Vec<SpecError>, include: Option<bool>) -> Self {
        SpecReply::new(json!({ "errors": errors }), include)
    }

    pub(super) fn render(&self, instruction: &str) -> String {
        let state = serde_json::to_string_pretty(&self.state).unwrap_or_default();
        if self.include_instruction {
            format!(
                "<tool_instruction>\n{}\n</tool_instruction>\n\n<state>\n{state}\n</state>",
                instruction.trim_end()
            )
        } else {
            state
        }
    }
}

impl Serialize for SpecReply {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.state.serialize(s)
    }
}

impl JsonSchema for SpecReply {
    fn schema_name() -> Cow<'static, str> {
        "SpecState".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "description": "The workflow state. Failures appear as `errors: [{type, message, code?, details?}]` or, for create-proposal and archive-change, as `status: \"failed\"` with an `error`.",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instruction_comes_first_and_is_on_by_default() {
        let reply = SpecReply::new(json!({ "a": 1 }), None);
        assert_eq!(
            reply.render("Do this.\n\n"),
            "<tool_instruction>\nDo this.\n</tool_instruction>\n\n<state>\n{\n  \"a\": 1\n}\n</state>"
        );
    }

    #[test]
    fn without_the_instruction_the_text_is_the_bare_state() {
        let reply = SpecReply::new(json!({ "a": [] }), Some(false));
        assert_eq!(reply.render("ignored"), "{\n  \"a\": []\n}");
        assert_eq!(
            serde_json::to_value(&reply).expect("serializes"),
            json!({ "a": [] })
        );
    }

    #[test]
    fn errors_travel_inside_the_state() {
        let reply = SpecReply::errors(
            vec![SpecError::new("WorkspaceError", "X_CODE", "went wrong")],
            Some(true),
        );
        assert_eq!(
            reply.state,
            json!({ "errors": [{ "type": "WorkspaceError", "message": "went wrong", "code": "X_CODE" }] })
        );
    }
}
