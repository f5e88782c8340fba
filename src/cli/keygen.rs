//! `gitward keygen --out DIR`: a fresh Ed25519 key pair for audit signing.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::audit;

/// Write an Ed25519 audit signing key pair into DIR (never over an existing key).
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The directory for audit-signing.key.pem (mode 600) and audit-signing.pub.pem.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

impl KeygenArgs {
    pub fn run(self) -> ExitCode {
        let dir = self.out;
        match audit::signing::keygen(&dir) {
            Ok(key_id) => {
                let _ = writeln!(
                    std::io::stdout(),
                    "wrote {0}/audit-signing.key.pem (private, mode 600) and \
                     {0}/audit-signing.pub.pem; key id {key_id}",
                    dir.display()
                );
                ExitCode::SUCCESS
            }
            Err(why) => {
                eprintln!("gitward: keygen: {why}");
                ExitCode::FAILURE
            }
        }
    }
}
