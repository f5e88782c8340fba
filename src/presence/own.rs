//! Our presence files: `<runDir>/presence/mcp/<pid>-<sessionUuid>.json`, one per
//! conversation: the one of stdio, and on HTTP one per session (per client for the
//! sessionless era), so each client is credited with its own repositories.
//!
//! It tells the FluxGit desktop (and other servers' `agents.presence`) which client this
//! server serves and which repositories it used: per repository the canonical path, the
//! time of the last accepted call and that tool's name, at most 16, least recently used
//! evicted. Nothing else from a call is kept. Tool calls only update memory and wake a
//! writer thread; the file is written there (temp file + rename, `0600` in a `0700`
//! directory), so a slow disk never delays an answer and a write error never fails one.

use std::collections::VecDeque;
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use super::{now_ms, pid_alive};
use crate::config::Config;
use crate::observe::{CallEvent, CallObserver, Settled};

/// Repositories kept per record.
pub const MAX_REPOSITORIES: usize = 16;
/// Records not updated for this long are swept, whoever wrote them.
pub const STALE_MS: u64 = 24 * 60 * 60 * 1000;
/// Client names and versions are cut to this many characters.
const CLIENT_TEXT_MAX: usize = 128;
/// A sweep looks at no more entries than this.
const SWEEP_MAX_ENTRIES: usize = 4096;

/// The file body. The same shape is read back by `agents.presence`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub schema_version: u32,
    pub pid: u32,
    pub session_id: String,
    pub started_at_ms: u64,
    pub updated_at_ms: u64,
    pub client: Client,
    pub repositories: Vec<RepoUse>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Client {
    pub name: Option<String>,
    pub version: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RepoUse {
    pub repo_path: String,
    pub last_call_at_ms: u64,
    pub last_tool: String,
}

/// This process's session id, once presence started (used to recognise our own record).
static SESSION: OnceLock<String> = OnceLock::new();

/// Our session id, when a presence file is kept.
pub fn session_id() -> Option<&'static str> {
    SESSION.get().map(String::as_str)
}

/// Conversations kept at once; the least recently active one's record goes first.
const MAX_CONVERSATIONS: usize = 64;

/// The live presence files of this server.
pub struct Presence {
    dir: PathBuf,
    state: Arc<Mutex<Conversations>>,
    wake: Mutex<Option<Sender<()>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

/// Every conversation's record, by conversation (`None`: the process's own, stdio's).
struct Conversations {
    by_key: std::collections::HashMap<Option<String>, State>,
    /// Files of records evicted, to delete on the next write.
    evicted: Vec<PathBuf>,
}

struct State {
    path: PathBuf,
    record: Record,
    /// Most recently used first.
    repos: VecDeque<RepoUse>,
    /// Set once an accepted call happened: before that there is nothing to publish.
    publish: bool,
    /// Changed since it was last written.
    dirty: bool,
}

impl State {
    fn new(dir: &Path, session: String, now: u64) -> State {
        let pid = std::process::id();
        State {
            path: dir.join(format!("{pid}-{session}.json")),
            record: Record {
                schema_version: 1,
                pid,
                session_id: session,
                started_at_ms: now,
                updated_at_ms: now,
                client: Client::default(),
                repositories: Vec::new(),
            },
            repos: VecDeque::new(),
            publish: false,
            dirty: false,
        }
    }
}

impl Presence {
    /// Sweeps stale records and prepares ours, unless presence is disabled or there is no
    /// run directory. Nothing is written until the first accepted call, and only once
    /// [`Presence::start_writer`] has run.
    pub fn start(config: &Config) -> Option<Arc<Presence>> {
        if config.presence_disabled {
            return None;
        }
        let dir = super::presence_dir(config.run_dir.as_deref()?);
        sweep(&dir, now_ms());
        let session = uuid::Uuid::new_v4().to_string();
        let _ = SESSION.set(session.clone());
        let mut by_key = std::collections::HashMap::new();
        by_key.insert(None, State::new(&dir, session, now_ms()));
        let state = Arc::new(Mutex::new(Conversations {
            by_key,
            evicted: Vec::new(),
        }));
        Some(Arc::new(Presence {
            dir,
            state,
            wake: Mutex::new(None),
            writer: Mutex::new(None),
        }))
    }

    /// Starts the thread that writes the record. Kept apart from [`Presence::start`] so
    /// the thread starts with the serving loop, after the first answer; calls observed
    /// before this are written with the next one.
    pub fn start_writer(&self) {
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if writer.is_some() {
            return;
        }
        let (tx, rx) = channel();
        let state = Arc::clone(&self.state);
        let spawned = std::thread::Builder::new()
            .name("presence".into())
            .spawn(move || writer_loop(&state, &rx));
        // Without its thread the record is never written: presence is best effort.
        if let Ok(handle) = spawned {
            *writer = Some(handle);
            // The writer skips it unless a call was already observed.
            let _ = tx.send(());
            *self.wake.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
        }
    }

    /// Stops the writer and deletes every record (clean exit).
    pub fn finish(&self) {
        drop(self.wake.lock().unwrap_or_else(|p| p.into_inner()).take());
        if let Some(writer) = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = writer.join();
        }
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        for record in state.by_key.values() {
            let _ = fs::remove_file(&record.path);
        }
        for path in &state.evicted {
            let _ = fs::remove_file(path);
        }
    }

    fn record_call(&self, event: &CallEvent<'_>) {
        let now = now_ms();
        let repo_path = serde_json::from_str::<RepoOf<'_>>(event.payload.get())
            .ok()
            .and_then(|r| r.repo_path)
            .filter(|p| p.starts_with('/') && !p.chars().any(char::is_control));
        {
            let mut all = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let key = event.conversation.map(str::to_owned);
            if !all.by_key.contains_key(&key) {
                if all.by_key.len() >= MAX_CONVERSATIONS {
                    let oldest = all
                        .by_key
                        .iter()
                        .filter(|(k, _)| k.is_some())
                        .min_by_key(|(_, s)| s.record.updated_at_ms)
                        .map(|(k, _)| k.clone());
                    if let Some(gone) = oldest.and_then(|k| all.by_key.remove(&k)) {
                        all.evicted.push(gone.path);
                    }
                }
                let session = uuid::Uuid::new_v4().to_string();
                all.by_key
                    .insert(key.clone(), State::new(&self.dir, session, now));
            }
            let Some(state) = all.by_key.get_mut(&key) else {
                return;
            };
            state.publish = true;
            state.dirty = true;
            state.record.updated_at_ms = now;
            state.record.client = Client {
                name: clip(event.client.name.as_deref()),
                version: clip(event.client.version.as_deref()),
            };
            if let Some(repo_path) = repo_path {
                state.repos.retain(|r| r.repo_path != repo_path);
                state.repos.push_front(RepoUse {
                    repo_path: repo_path.into_owned(),
                    last_call_at_ms: now,
                    last_tool: event.tool.chars().take(CLIENT_TEXT_MAX).collect(),
                });
                state.repos.truncate(MAX_REPOSITORIES);
            }
        }
        if let Some(wake) = self.wake.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            let _ = wake.send(());
        }
    }
}

impl CallObserver for Presence {
    fn on_call(&self, event: &CallEvent<'_>) -> Option<Settled> {
        // Refused and failed calls say nothing about where the client works.
        if event.known && !event.is_error {
            self.record_call(event);
        }
        // Best effort, written in the background: the response does not wait for it.
        None
    }
}

fn clip(text: Option<&str>) -> Option<String> {
    text.map(|t| t.chars().take(CLIENT_TEXT_MAX).collect())
}

fn writer_loop(state: &Mutex<Conversations>, wake: &Receiver<()>) {
    while wake.recv().is_ok() {
        // A burst of calls costs one write per record.
        while wake.try_recv().is_ok() {}
        let (bodies, evicted) = {
            let mut all = state.lock().unwrap_or_else(|p| p.into_inner());
            let evicted = std::mem::take(&mut all.evicted);
            let bodies: Vec<(PathBuf, Vec<u8>)> = all
                .by_key
                .values_mut()
                .filter(|s| s.publish && s.dirty)
                .filter_map(|s| {
                    s.dirty = false;
                    let mut record = s.record.clone();
                    record.repositories = s.repos.iter().cloned().collect();
                    serde_json::to_vec(&record)
                        .ok()
                        .map(|b| (s.path.clone(), b))
                })
                .collect();
            (bodies, evicted)
        };
        for path in evicted {
            let _ = fs::remove_file(path);
        }
        for (path, body) in bodies {
            // Best effort: the next call tries again.
            let _ = write_atomically(&path, &body);
        }
    }
}

/// Creates `dir` (and missing parents) as `0700`, and tightens it if it already exists.
pub(crate) fn private_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other(
            "presence directory is not a directory",
        ));
    }
    if meta.mode() & 0o777 != 0o700 && meta.uid() == rustix::process::getuid().as_raw() {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

fn write_atomically(path: &Path, body: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent"))?;
    private_dir(dir)?;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("no file name"))?;
    let tmp = dir.join(format!(".{}.tmp", name.to_string_lossy()));
    let _ = fs::remove_file(&tmp);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(body)?;
    drop(file);
    fs::rename(&tmp, path)
}

/// Removes records (and leftover temp files) whose writer is gone or that were not
/// updated for 24 hours. Only regular files with our naming are touched.
pub fn sweep(dir: &Path, now: u64) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten().take(SWEEP_MAX_ENTRIES) {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(stem) = name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(".json.tmp"))
            .or_else(|| name.strip_suffix(".json"))
        else {
            continue;
        };
        let Some(pid) = stem
            .split_once('-')
            .and_then(|(p, _)| p.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let updated = if name.starts_with('.') {
            mtime_ms(&meta)
        } else {
            read_record(&path)
                .map(|r| r.updated_at_ms)
                .unwrap_or_else(|| mtime_ms(&meta))
        };
        let ours = pid == std::process::id() && session_id().is_some_and(|s| stem.ends_with(s));
        let stale = now.saturating_sub(updated) > STALE_MS;
        if !ours && (stale || !pid_alive(pid) || pid == std::process::id()) {
            let _ = fs::remove_file(&path);
        }
    }
}

fn mtime_ms(meta: &fs::Metadata) -> u64 {
    (meta.mtime().max(0) as u64) * 1000 + (meta.mtime_nsec().max(0) as u64) / 1_000_000
}

/// Reads one record, refusing symlinks, non-regular and oversized files.
pub(crate) fn read_record(path: &Path) -> Option<Record> {
    let bytes = super::fsread::read_small(path, 256 * 1024)?;
    let record: Record = serde_json::from_slice(&bytes).ok()?;
    (record.schema_version == 1).then_some(record)
}

/// The one field presence reads of a call's payload; the rest is skipped unparsed.
#[derive(serde::Deserialize)]
struct RepoOf<'a> {
    #[serde(rename = "repoPath", borrow, default)]
    repo_path: Option<std::borrow::Cow<'a, str>>,
}
