//! What a request may see: the configuration of its capability, or the git tools only.
//!
//! Each capability's configuration is built once from its frozen descriptor; the caller
//! can name no other workspace, and the current directory is never one. Headers play no
//! part: `Authorization` and `X-Fyllo-*` from the caller are never read.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::capability::{self, Capability};
use crate::config::{Config, Toolset};
use crate::specs::workspace::Workspace;

/// A request's scope: which capability (if any) and the configuration its tools see.
#[derive(Clone)]
pub struct Scope {
    /// The capability's id; `None` for the capability-less endpoint.
    pub capability: Option<String>,
    pub config: Arc<Config>,
}

type Stamp = (i64, i64, u64, u64);

/// The live view of the run directory's capabilities.
pub struct Scopes {
    file: Option<PathBuf>,
    /// The git tools only: no workspace, no spec tools.
    plain: Arc<Config>,
    /// The configuration a capability starts from (spec tools on when they may be).
    bound: Config,
    loaded: Mutex<(Option<Stamp>, HashMap<String, Scope>)>,
}

impl Scopes {
    /// `base` is the server's configuration; `specs` says whether spec tools may be served
    /// at all (not with `FYLLO_DISABLE_BUNDLED_MCP=1`, nor when `--toolsets` leaves them out).
    pub fn new(base: &Config, specs: bool) -> Scopes {
        let mut plain = base.clone();
        plain.workspace = None;
        plain.toolsets.retain(|t| *t != Toolset::Specs);
        let mut bound = plain.clone();
        if specs {
            bound.toolsets.push(Toolset::Specs);
        }
        Scopes {
            file: base.run_dir.as_deref().map(capability::file),
            plain: Arc::new(plain),
            bound,
            loaded: Mutex::new((None, HashMap::new())),
        }
    }

    /// The scope of the capability-less endpoint.
    pub fn plain(&self) -> Scope {
        Scope {
            capability: None,
            config: Arc::clone(&self.plain),
        }
    }

    /// The scope of `token`, or `None` when no live capability has it.
    pub fn of(&self, token: &str) -> Option<Scope> {
        let file = self.file.as_deref()?;
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        let now = capability::stamp(file);
        if now != loaded.0 || now.is_none() {
            let capabilities = match capability::load(file) {
                Ok(all) => all,
                Err(why) => {
                    // Fail closed: an unreadable file grants nothing.
                    eprintln!("gitward: {why}; no capability is honoured until it is fixed");
                    Vec::new()
                }
            };
            *loaded = (now, self.build(capabilities));
        }
        loaded.1.get(&capability::token_hash(token)).cloned()
    }

    fn build(&self, capabilities: Vec<Capability>) -> HashMap<String, Scope> {
        let specs = self.bound.has(Toolset::Specs);
        capabilities
            .into_iter()
            .filter_map(|c| {
                let mut config = self.bound.clone();
                if specs {
                    match Workspace::parse(&c.workspace) {
                        Ok(ws) => config.workspace = Some(Arc::new(ws)),
                        Err(why) => {
                            eprintln!("gitward: capability {} is not served: {why}", c.id);
                            return None;
                        }
                    }
                }
                let scope = Scope {
                    capability: Some(c.id),
                    config: Arc::new(config),
                };
                Some((c.token_sha256, scope))
            })
            .collect()
    }
}
