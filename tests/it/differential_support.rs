//! The differential suite's machinery: git at one fixed date (so a commit made through the
//! gateway and the same commit made by plain git have the same id), a picture of
//! everything git keeps about a set of repositories, and a write proposed to a real
//! gateway, approved through its human API, settled and restored.
//!
//! A picture is a sorted map from a name to what it holds, so two pictures compare key by
//! key and a failure names exactly what differs. Names and bytes travel as bytes
//! (escaped), never lossily.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::operation_e2e::Gateway;

/// Every commit and reflog entry of the suite, on both sides: 2026-01-01T00:00:00Z.
pub const DATE: &str = "1767225600 +0000";

/// Not a timing assert: how long a proposal may take before the case gives up.
const PATIENCE: Duration = Duration::from_secs(120);

/// What a picture holds, name by name.
pub type Picture = BTreeMap<String, String>;

/// Runs git in `dir` with the fixture's environment at [`DATE`]; the raw output.
pub fn git_out(fx: &Fixture, dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env())
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().unwrap();
    if let Some(bytes) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// [`git_out`] that must succeed; trimmed stdout.
pub fn git(fx: &Fixture, dir: &Path, args: &[&str]) -> String {
    let out = git_out(fx, dir, args, None);
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

/// A read that never takes the index lock (what the picture runs).
fn read(fx: &Fixture, dir: &Path, args: &[&str]) -> Vec<u8> {
    let mut full = vec!["-c", "core.fsmonitor=false"];
    full.extend_from_slice(args);
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(&full)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(fx.env())
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Bytes as a picture shows them: escaped, cut to a length and a digest when long.
fn shown(bytes: &[u8], side: &Path) -> String {
    let text = if bytes.len() <= 400 || (bytes.len() <= 64 * 1024 && is_text(bytes)) {
        bytes.escape_ascii().to_string()
    } else {
        // FNV-1a: a digest with no dependency; a collision here only hides a difference
        // that the length and the head would most likely show anyway.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
        let head = bytes[..80].escape_ascii().to_string();
        format!("{} bytes #{h:016x} {head}…", bytes.len())
    };
    let side = side.as_os_str().as_bytes().escape_ascii().to_string();
    text.replace(&side, "[SIDE]")
}

/// Printable lines (reflogs, logs, configuration): shown whole.
fn is_text(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|b| b.is_ascii_graphic() || [b' ', b'\n', b'\t'].contains(b))
}

/// How strict a picture is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Gateway against plain git: the index as git lists it (its stat data differs with
    /// the moment each side wrote a file), reflogs, hook canaries, git's scratch files.
    Git,
    /// Before against after a restore: the index file byte for byte; no reflogs (a
    /// restore is recorded as a move), no canaries (a hook that ran stays run).
    Exact,
}

/// Where a path lies: outside any git directory, or inside one at `inner`.
fn git_inner(rel: &Path) -> Option<Vec<String>> {
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let at = parts.iter().position(|p| p.ends_with(".git"))?;
    Some(parts[at + 1..].to_vec())
}

/// Git's own files that carry no state of the repository a write could change (or that
/// the picture reads through git instead): objects, hooks, refs (read with
/// `for-each-ref`), the index (read with `ls-files`, or byte for byte in exact mode).
fn skipped(inner: &[String], mode: Mode) -> bool {
    let name = inner.last().map(String::as_str).unwrap_or_default();
    if inner.iter().any(|p| p == "logs") {
        return mode == Mode::Exact || inner.iter().any(|p| p == "gitward");
    }
    inner
        .iter()
        .any(|p| ["objects", "hooks", "refs", "info"].contains(&p.as_str()))
        || ["packed-refs", "description", "FETCH_HEAD"].contains(&name)
        || name.starts_with("sharedindex.")
        || (mode == Mode::Git && name == "index")
        || (mode == Mode::Exact && ["canary.log", "COMMIT_EDITMSG"].contains(&name))
}

/// Everything under `side`: files (mode and bytes), links, empty directories, git's
/// state files; and for each repository found its refs, index entries and status.
pub fn picture(fx: &Fixture, side: &Path, mode: Mode) -> Picture {
    let mut out = Picture::new();
    let mut roots: Vec<(PathBuf, bool)> = Vec::new();
    let mut stack = vec![side.to_owned()];
    while let Some(dir) = stack.pop() {
        let mut empty = true;
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            empty = false;
            let path = entry.path();
            let rel = path.strip_prefix(side).unwrap().to_owned();
            if rel == Path::new("libsrc") {
                // The submodule's upstream: no operation writes there.
                continue;
            }
            let key = rel.as_os_str().as_bytes().escape_ascii().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let inner = git_inner(&rel);
            let name = path.file_name().unwrap().as_bytes();
            let outside = git_inner(rel.parent().unwrap()).is_none();
            if outside && name == b".git" {
                roots.push((dir.clone(), false));
            } else if outside && inner.is_some() && meta.is_dir() {
                roots.push((path.clone(), true));
            }
            if inner.as_ref().is_some_and(|i| skipped(i, mode)) {
                continue;
            }
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    key,
                    format!("link {}", shown(target.as_os_str().as_bytes(), side)),
                );
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                let perm = meta.permissions().mode() & 0o777;
                out.insert(key, format!("{perm:o} {}", shown(&bytes, side)));
            }
        }
        // Row "empty directories" of the table: a restore, like git, leaves none behind.
        if empty && mode == Mode::Git && git_inner(dir.strip_prefix(side).unwrap()).is_none() {
            let rel = dir.strip_prefix(side).unwrap().as_os_str().as_bytes();
            out.insert(format!("{}/", rel.escape_ascii()), "empty dir".into());
        }
    }
    for (root, bare) in roots {
        let at = root
            .strip_prefix(side)
            .unwrap()
            .as_os_str()
            .as_bytes()
            .escape_ascii()
            .to_string();
        repository(fx, &root, bare, &at, side, &mut out);
    }
    out
}

/// The refs (not gitward's own), and for a worktree its index entries and status.
fn repository(fx: &Fixture, root: &Path, bare: bool, at: &str, side: &Path, out: &mut Picture) {
    let refs = read(
        fx,
        root,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname) %(symref)",
        ],
    );
    for line in refs.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let line = String::from_utf8_lossy(line);
        let (name, rest) = line.split_once(' ').unwrap();
        if !name.starts_with("refs/gitward/") {
            out.insert(format!("{at} ref {name}"), rest.to_owned());
        }
    }
    if bare {
        return;
    }
    let index = read(fx, root, &["ls-files", "-s", "--debug", "-z"]);
    let text = String::from_utf8_lossy(&index).into_owned();
    // `-z` ends each entry's first line with NUL; the stat lines follow up to the next.
    for chunk in text.split('\0').filter(|c| !c.trim().is_empty()) {
        let mut lines = chunk.lines().filter(|l| !l.trim().is_empty());
        let entry = lines.next().unwrap_or_default();
        let flags = chunk
            .split("flags: ")
            .nth(1)
            .map(|f| f.trim().to_owned())
            .unwrap_or_default();
        if let Some((meta, path)) = entry.split_once('\t') {
            out.insert(
                format!("{at} index {path}"),
                format!("{meta} flags {flags}"),
            );
        }
    }
    let status = read(
        fx,
        root,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "--ignored=matching",
            "-uall",
        ],
    );
    out.insert(format!("{at} status"), shown_lines(&status, side));
}

fn shown_lines(bytes: &[u8], side: &Path) -> String {
    bytes
        .split(|b| *b == b'\n')
        .map(|l| shown(l, side))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Panics with every name whose content differs between `a` and `b`.
pub fn assert_same(what: &str, a: &Picture, b: &Picture) {
    if let Some(found) = differences(what, a, b) {
        panic!("{found}");
    }
}

/// Every name whose content differs between `a` and `b`, as text; `None` when none does.
pub fn differences(what: &str, a: &Picture, b: &Picture) -> Option<String> {
    let mut diffs = Vec::new();
    for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
        let (x, y) = (a.get(key), b.get(key));
        match (x, y) {
            _ if x == y => {}
            // Text of many lines (a reflog, a canary log, a status): the lines that differ.
            (Some(x), Some(y)) if x.contains("\\n") || x.contains('\n') => {
                let lines = |s: &str| -> Vec<String> {
                    s.replace("\\n", "\n").lines().map(str::to_owned).collect()
                };
                let (xs, ys) = (lines(x), lines(y));
                let only = |from: &[String], other: &[String], sign: char| -> String {
                    from.iter()
                        .filter(|l| !other.contains(l))
                        .map(|l| format!("\n    {sign} {l}"))
                        .collect()
                };
                diffs.push(format!(
                    "  {key}{}{}",
                    only(&xs, &ys, '-'),
                    only(&ys, &xs, '+')
                ));
            }
            _ => diffs.push(format!("  {key}\n    - {x:?}\n    + {y:?}")),
        }
    }
    (!diffs.is_empty()).then(|| {
        format!(
            "{what}: {} difference(s)\n{}",
            diffs.len(),
            diffs.join("\n")
        )
    })
}

/// Removes every name `drop` selects.
pub fn without(mut p: Picture, drop: impl Fn(&str) -> bool) -> Picture {
    p.retain(|k, _| !drop(k));
    p
}

/// A gateway whose git writes at [`DATE`].
pub fn gateway(fx: &Fixture) -> Gateway {
    Gateway::start_with_env(
        fx,
        &[],
        &[("GIT_AUTHOR_DATE", DATE), ("GIT_COMMITTER_DATE", DATE)],
    )
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into()
}

/// Proposes `kind` with `fields` on `repo` through the handshake API; the answer.
pub fn propose(gw: &Gateway, kind: &str, repo: &Path, fields: &Value) -> Value {
    let mut body = json!({
        "agentId": "differential",
        "operationType": kind,
        "repoPath": repo,
        "reason": "the same as plain git",
        "requestedAt": "2026-05-28T11:42:09.512Z",
    });
    for (k, v) in fields.as_object().unwrap() {
        body[k] = v.clone();
    }
    let mut answer = agent()
        .post(format!(
            "http://{}/v1/mcp/operation/preview/{kind}",
            gw.handshake
        ))
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .unwrap();
    let text = answer.body_mut().read_to_string().unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_else(|_| json!({ "raw": text }))
}

/// The proposal's record once it left the live states.
pub fn settle(gw: &Gateway, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let mut answer = agent()
            .get(format!(
                "http://{}/v1/mcp/operation/status/{id}",
                gw.handshake
            ))
            .call()
            .unwrap();
        let text = answer.body_mut().read_to_string().unwrap_or_default();
        let record: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let live = ["pending", "approved", "executing"]
            .contains(&record["status"].as_str().unwrap_or_default());
        if !live {
            return record;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{id} never finished: {record}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Proposes, approves as a person who ticked every box, and waits for the outcome.
pub fn run(gw: &Gateway, kind: &str, repo: &Path, fields: &Value) -> Value {
    let proposed = propose(gw, kind, repo, fields);
    let Some(id) = proposed["previewId"].as_str() else {
        return json!({ "status": "refused", "answer": proposed });
    };
    gw.approve_confirmed(id);
    settle(gw, id)
}

/// A person's restore of `rp`; the status and the answer.
pub fn restore(gw: &Gateway, rp: &str) -> (u16, Value) {
    gw.human_post(
        &format!("api/restore-points/{rp}/restore"),
        json!({"confirmMoved": false}),
    )
}
