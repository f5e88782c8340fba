//! `gitward setup openspec`: installs the pinned OpenSpec CLI the spec tools drive into
//! gitward's own data directory, for installs that bring no Node packages with them.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::config::Config;
use crate::process::CancellationToken;
use crate::specs::openspec_install::{self, Installed};

/// Install what optional parts of gitward need.
#[derive(Debug, Args)]
pub struct SetupArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Install the pinned OpenSpec CLI (with npm) into gitward's data directory, where the
    /// spec tools find it.
    Openspec,
}

impl SetupArgs {
    pub fn run(self) -> ExitCode {
        let What::Openspec = self.what;
        let config = match Config::from_env(&[]) {
            Ok(config) => config,
            Err(why) => return super::usage_error("setup", &why),
        };
        crate::process::configure(config.process.clone());
        let cancel = CancellationToken::new();
        let outcome =
            super::startup::runtime().block_on(openspec_install::install(&config.user, &cancel));
        match outcome {
            Ok(done) => {
                let (verb, cli) = match done {
                    Installed::Fresh(cli) => ("installed", cli),
                    Installed::Present(cli) => ("already installed", cli),
                };
                let _ = writeln!(
                    std::io::stdout(),
                    "OpenSpec {} {verb}: {}",
                    openspec_install::PINNED_VERSION,
                    cli.display()
                );
                ExitCode::SUCCESS
            }
            Err(why) => {
                eprintln!("gitward: setup openspec: {why}");
                ExitCode::FAILURE
            }
        }
    }
}
