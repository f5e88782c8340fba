//! `gitward audit export`: the verified ledger as JSON lines or CSV on stdout, for other
//! tools. Exit 0 exported, 3 the ledger does not verify (nothing exported), 2 usage.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};

use crate::audit::export::{self, ExportError, Filter, Format};
use crate::audit::{self, AuditConfig};
use crate::config::Config;

/// Work with the audit ledger.
#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    Export(ExportArgs),
}

/// Verify the ledger, then write its entries to stdout (exit 0 ok, 3 broken, 2 usage).
#[derive(Debug, Args)]
#[command(args_override_self = true)]
struct ExportArgs {
    #[arg(long, value_enum)]
    format: FormatArg,
    /// Entries at or after this time (RFC 3339, or milliseconds since the Unix epoch).
    #[arg(long, value_name = "T")]
    since: Option<String>,
    /// Entries before this time (RFC 3339, or milliseconds since the Unix epoch).
    #[arg(long, value_name = "T")]
    until: Option<String>,
    /// Only entries of these event types (repeatable, or comma-separated).
    #[arg(long = "event-type", value_name = "TYPE", value_delimiter = ',')]
    event_type: Vec<String>,
    /// Export a ledger that does not verify too, every row marked unverified.
    #[arg(long)]
    allow_broken: bool,
    /// A public key the signatures may be made with (repeatable).
    #[arg(long, value_name = "PEM")]
    pubkey: Vec<PathBuf>,
    /// The ledger [default: the one the server writes].
    #[arg(value_name = "PATH")]
    path: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Jsonl,
    Csv,
}

impl AuditArgs {
    pub fn run(self) -> ExitCode {
        match self.command {
            AuditCommand::Export(args) => args.run(),
        }
    }
}

const VERB: &str = "audit";

impl ExportArgs {
    fn run(self) -> ExitCode {
        let mut keys = Vec::with_capacity(self.pubkey.len());
        for file in &self.pubkey {
            match audit::signing::load_public_key(file) {
                Ok(key) => keys.push(key),
                Err(why) => return super::usage_error(VERB, &format!("--pubkey {why}")),
            }
        }
        let filter = match (time("--since", &self.since), time("--until", &self.until)) {
            (Ok(since_ms), Ok(until_ms)) => Filter {
                since_ms,
                until_ms,
                event_types: self.event_type,
            },
            (Err(why), _) | (_, Err(why)) => return super::usage_error(VERB, &why),
        };
        let path = match self.path {
            Some(path) => path,
            None => match Config::from_env(&[]).map(|c| AuditConfig::from_config(&c)) {
                Ok(Ok(Some(config))) => config.path,
                Ok(Ok(None)) => return super::usage_error(VERB, "audit is disabled: give PATH"),
                Ok(Err(e)) => return super::usage_error(VERB, &e.to_string()),
                Err(e) => return super::usage_error(VERB, &e),
            },
        };
        let format = match self.format {
            FormatArg::Jsonl => Format::Jsonl,
            FormatArg::Csv => Format::Csv,
        };
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(256 * 1024, stdout.lock());
        let exported = export::export(&path, &keys, format, &filter, self.allow_broken, &mut out);
        let _ = out.flush();
        drop(out);
        match exported {
            Ok(done) => {
                if let Some(failure) = &done.failure {
                    eprintln!(
                        "gitward: the audit ledger does not verify ({failure}); exported {} \
                         row(s) marked unverified",
                        done.rows
                    );
                }
                ExitCode::SUCCESS
            }
            Err(ExportError::NotFound(path)) => {
                super::usage_error(VERB, &format!("no audit ledger at {}", path.display()))
            }
            Err(e @ ExportError::Broken(..)) => {
                eprintln!("gitward: {e}");
                ExitCode::from(3)
            }
            // A closed pipe (`| head`) ends the export; nothing to report.
            Err(ExportError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                ExitCode::SUCCESS
            }
            Err(ExportError::Io(e)) => {
                eprintln!("gitward: audit export: {e}");
                ExitCode::from(1)
            }
        }
    }
}

/// `T` as milliseconds since the Unix epoch.
fn time(flag: &str, value: &Option<String>) -> Result<Option<u64>, String> {
    let Some(text) = value else {
        return Ok(None);
    };
    if let Ok(ms) = text.parse::<u64>() {
        return Ok(Some(ms));
    }
    let ts: jiff::Timestamp = text
        .parse()
        .map_err(|e| format!("{flag} {text:?}: expected an RFC 3339 time or milliseconds ({e})"))?;
    u64::try_from(ts.as_millisecond())
        .map(Some)
        .map_err(|_| format!("{flag} {text:?}: before 1970"))
}
