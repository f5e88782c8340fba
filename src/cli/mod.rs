//! The command line: serve over stdio (the default), run one tool, list tools, and the
//! audit ledger's verbs. One file per verb; this file only parses and dispatches.
//!
//! Exit codes: 0 success, 1 a tool reported an error or the verb failed, 2 usage,
//! 3 the audit ledger does not verify.

mod approve;
mod audit_export;
mod call;
mod capability;
mod gateway;
mod human;
mod keygen;
mod login_file;
mod options;
mod pending;
mod progress_line;
mod reject;
mod restore;
mod serve;
mod setup;
mod startup;
mod tools;
mod verify_audit;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use options::SharedOptions;

/// gitward — a safety-first MCP server for Git. Without a command it serves MCP over
/// stdio, as `gitward serve` does.
#[derive(Debug, Parser)]
#[command(
    name = "gitward",
    version,
    args_conflicts_with_subcommands = true,
    args_override_self = true,
    after_help = "Exit codes: 0 ok, 1 a tool reported an error or the command failed, \
                  2 usage, 3 the audit ledger does not verify."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The options of `serve`, for a bare `gitward`.
    #[command(flatten)]
    serve: SharedOptions,
}

#[derive(Debug, Subcommand)]
enum Command {
    Serve(serve::ServeArgs),
    Call(call::CallArgs),
    Tools(tools::ToolsArgs),
    VerifyAudit(verify_audit::VerifyAuditArgs),
    Audit(audit_export::AuditArgs),
    Keygen(keygen::KeygenArgs),
    Gateway(gateway::GatewayArgs),
    Pending(pending::PendingArgs),
    Approve(approve::ApproveArgs),
    Reject(reject::RejectArgs),
    Restore(restore::RestoreArgs),
    Capability(capability::CapabilityArgs),
    Setup(setup::SetupArgs),
}

/// Parses `args` (without the program name) and runs the verb.
pub fn main(args: Vec<OsString>) -> ExitCode {
    // What hosts start: skipping the parser's build of every verb's arguments keeps it
    // off the way to the first answer. Clap would give exactly these defaults.
    if args.is_empty() {
        return serve::ServeArgs {
            options: SharedOptions::default(),
            http: None,
            require_capability: false,
        }
        .run();
    }
    let argv = std::iter::once(OsString::from("gitward")).chain(args);
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        // `--help` and `--version` arrive here too, with exit code 0 and stdout.
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match cli.command {
        None => serve::ServeArgs {
            options: cli.serve,
            http: None,
            require_capability: false,
        }
        .run(),
        Some(Command::Serve(args)) => args.run(),
        Some(Command::Call(args)) => args.run(),
        Some(Command::Tools(args)) => args.run(),
        Some(Command::VerifyAudit(args)) => args.run(),
        Some(Command::Audit(args)) => args.run(),
        Some(Command::Keygen(args)) => args.run(),
        Some(Command::Gateway(args)) => args.run(),
        Some(Command::Pending(args)) => args.run(),
        Some(Command::Approve(args)) => args.run(),
        Some(Command::Reject(args)) => args.run(),
        Some(Command::Restore(args)) => args.run(),
        Some(Command::Capability(args)) => args.run(),
        Some(Command::Setup(args)) => args.run(),
    }
}

/// A usage error found after parsing (bad JSON, an unreadable key, an unknown tool):
/// printed as clap prints its own, with the verb's usage line, and exit code 2.
fn usage_error(verb: &str, why: &str) -> ExitCode {
    let mut command = Cli::command();
    // Building names each subcommand `gitward VERB` for its usage line.
    command.build();
    let error = match command.find_subcommand_mut(verb) {
        Some(sub) => sub.error(clap::error::ErrorKind::ValueValidation, why),
        None => command.error(clap::error::ErrorKind::ValueValidation, why),
    };
    let _ = error.print();
    ExitCode::from(2)
}

/// The observer a serving command records calls with: the refusal window and the read
/// budget as configured.
fn audit_observer(
    writer: &std::sync::Arc<crate::audit::writer::AuditWriter>,
    config: &crate::config::AuditEnv,
) -> crate::audit::record::AuditObserver {
    use crate::audit::flood;
    crate::audit::record::AuditObserver::new(
        std::sync::Arc::clone(writer),
        flood::window(config.refusal_window_ms),
    )
    .with_read_budget(
        config
            .read_window_ms
            .map_or(flood::READ_WINDOW, std::time::Duration::from_millis),
        config.read_budget.unwrap_or(flood::READ_BUDGET),
    )
}
