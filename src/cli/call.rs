//! `gitward call TOOL [JSON]`: run one tool once, audited as a served call is.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde_json::Value;

use super::options::SharedOptions;
use super::startup::{runtime, start_audit};
use crate::config::Config;
use crate::process::CancellationToken;
use crate::tools::{self, CallCtx, ClientInfo};
use crate::transport;

/// Run one tool once and print its result (exit 1 when the tool reports an error).
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's name, as `gitward tools` lists it.
    #[arg(value_name = "TOOL")]
    tool: String,
    /// The tool's arguments as one JSON object.
    #[arg(value_name = "JSON", default_value = "{}")]
    json: String,
    #[command(flatten)]
    options: SharedOptions,
}

impl CallArgs {
    pub fn run(self) -> ExitCode {
        let config = match self.options.config() {
            Ok(config) => Arc::new(config),
            Err(why) => return super::usage_error("call", &why),
        };
        let args: Value = match serde_json::from_str(&self.json) {
            Ok(v) => v,
            Err(e) => {
                return super::usage_error("call", &format!("arguments are not valid JSON: {e}"));
            }
        };
        call(config, &self.tool, args)
    }
}

fn call(config: Arc<Config>, name: &str, args: Value) -> ExitCode {
    // Audited exactly as a call through the server is, and failing closed the same way.
    let audit = match start_audit(&config) {
        Ok(audit) => audit,
        Err(code) => return code,
    };
    let recorder = audit
        .as_ref()
        .map(|writer| super::audit_observer(writer, &config.audit));
    let client = ClientInfo {
        name: Some("gitward-cli".into()),
        version: Some(env!("CARGO_PKG_VERSION").into()),
    };
    // On a terminal, the call's progress as a line on stderr; stdout is the same either way.
    let progress = super::progress_line::on_stderr();
    let ctx = CallCtx {
        config: Arc::clone(&config),
        cancel: CancellationToken::new(),
        client: client.clone(),
        progress: progress.clone(),
    };
    let started = std::time::Instant::now();
    let runtime = runtime();
    let outcome = runtime.block_on(transport::run_tool(ctx, name, args.clone()));
    progress.close();
    if let Some(recorder) = &recorder {
        let unknown;
        let found = tools::find(&config, name);
        let read_only = found.is_some_and(|t| t.annotations.read_only);
        let (payload, is_error, error_code) = match &outcome {
            Some(o) => (&o.rendered.structured, o.is_error, o.error_code),
            None => {
                let data = crate::tools::compact(&transport::unknown_tool(&config, name));
                unknown = serde_json::value::RawValue::from_string(data)
                    .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned());
                (&unknown, true, Some(crate::error::code::INVALID_PARAMS))
            }
        };
        let event = crate::observe::CallEvent {
            // The ledger keeps the tool's identity, whichever name called it.
            tool: found.map_or(name, |t| t.name),
            known: outcome.is_some(),
            read_only,
            arguments: &args,
            payload,
            is_error,
            error_code,
            duration: started.elapsed(),
            client: &client,
            conversation: None,
        };
        use crate::observe::CallObserver as _;
        let settled = recorder.on_call(&event);
        runtime.block_on(transport::settle(settled));
        recorder.finish();
    }
    if let Some(writer) = audit {
        writer.finish();
    }
    let Some(outcome) = outcome else {
        return super::usage_error(
            "call",
            &format!("unknown tool: {name} (see `gitward tools`)"),
        );
    };
    let structured: serde_json::Value =
        serde_json::from_str(outcome.rendered.structured.get()).unwrap_or_default();
    let text = serde_json::to_string_pretty(&structured).unwrap_or_default();
    let _ = writeln!(std::io::stdout(), "{text}");
    if outcome.is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
