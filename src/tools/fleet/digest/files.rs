//! Reading one repository's reflog files without running git: locating its git
//! directory, listing branch reflogs and reading each from its end.

use std::path::{Path, PathBuf};

use super::back_lines::BackLines;
use super::moves::{Raw, Window};
use super::{BYTES_PER_REPO, MAX_BRANCH_LOGS};
use crate::config::Config;
use crate::git::layout::{self, Layout};
use crate::git::reflog::Storage;
use crate::git::repo;
use crate::parse::{ParseError, reflog_file};
use crate::tools::fleet::reason;

/// What one repository gave.
#[derive(Debug, Default)]
pub(super) struct Scan {
    pub(super) display: String,
    pub(super) layout: Option<Layout>,
    pub(super) reftable: bool,
    pub(super) events: Vec<Raw>,
    pub(super) total: u64,
    pub(super) partial: bool,
    pub(super) error: Option<String>,
}

impl Scan {
    pub(super) fn failed(display: &str, why: String) -> Scan {
        Scan {
            display: display.to_owned(),
            error: Some(why),
            ..Scan::default()
        }
    }
}

/// Reads one repository's reflog files (or notes that it needs git).
pub(super) fn scan_files(config: &Config, path: &str, window: Window) -> Scan {
    let canonical = match repo::canonical_dir(config, "repoPaths", path) {
        Ok(c) => c,
        Err(err) => return Scan::failed(path, reason(err)),
    };
    let Some(layout) = layout::locate(&canonical) else {
        return Scan::failed(
            &canonical.to_string_lossy(),
            "is not inside a git repository".into(),
        );
    };
    let display = layout.top.to_string_lossy().into_owned();
    if !config.allows(&layout.top) {
        return Scan::failed(&display, "is outside the allowed roots".into());
    }
    if let Err(outside) =
        crate::git::reach::check(&config.allowed_roots, &layout.git_dir, &layout.common_dir)
    {
        return Scan::failed(&display, outside.0);
    }
    let mut scan = Scan {
        display,
        reftable: Storage::at(&layout.common_dir) == Storage::Reftable,
        layout: Some(layout.clone()),
        ..Scan::default()
    };
    if scan.reftable {
        return scan;
    }
    // Names as bytes: a branch name need not be UTF-8.
    let mut logs: Vec<(Vec<u8>, PathBuf)> = Vec::new();
    if window.scope.head() && real_dir(&layout.git_dir.join("logs")) {
        logs.push((b"HEAD".to_vec(), layout.git_dir.join("logs/HEAD")));
    }
    if window.scope.branches() {
        let logs_dir = layout.common_dir.join("logs");
        let refs = logs_dir.join("refs");
        let heads = refs.join("heads");
        if real_dir(&logs_dir) && real_dir(&refs) && real_dir(&heads) {
            let mut found = Vec::new();
            scan.partial |= !branch_logs(&heads, b"refs/heads", 0, &mut found);
            found.sort();
            logs.extend(found);
        }
    }
    let mut budget = BYTES_PER_REPO;
    for (rank, (name, file)) in logs.into_iter().enumerate() {
        match read_reflog(&file, &name, rank, window, &mut budget, &mut scan) {
            Ok(()) => {}
            Err(why) => {
                scan.error = Some(why);
                scan.events.clear();
                scan.total = 0;
                break;
            }
        }
        if budget == 0 {
            scan.partial = true;
            break;
        }
    }
    scan
}

/// A directory that is not a symlink.
fn real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Collects branch reflog files under `dir`, never through a symlink. Returns false when
/// the listing stopped at [`MAX_BRANCH_LOGS`].
fn branch_logs(dir: &Path, prefix: &[u8], depth: usize, out: &mut Vec<(Vec<u8>, PathBuf)>) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return true;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = [prefix, b"/", entry.file_name().as_bytes()].concat();
        if kind.is_dir() && depth < 64 {
            if !branch_logs(&entry.path(), &name, depth + 1, out) {
                return false;
            }
        } else if kind.is_file() {
            if out.len() == MAX_BRANCH_LOGS {
                return false;
            }
            out.push((name, entry.path()));
        }
    }
    true
}

/// Reads one reflog from its end, adding the moves inside the window to `scan`.
fn read_reflog(
    file: &Path,
    raw_name: &[u8],
    rank: usize,
    window: Window,
    budget: &mut u64,
    scan: &mut Scan,
) -> Result<(), String> {
    let file = match crate::safe_file::open_regular(file) {
        Ok((f, _)) => f,
        // No reflog (never written, or a symlink, FIFO or device we refuse to read): no moves.
        Err(_) => return Ok(()),
    };
    let (name, ref_bytes) = match std::str::from_utf8(raw_name) {
        Ok(text) => (text.to_owned(), None),
        Err(_) => (
            String::from_utf8_lossy(raw_name).into_owned(),
            Some(raw_name.to_vec()),
        ),
    };
    let mut lines = BackLines::new(file).map_err(|e| format!("{name} reflog: {e}"))?;
    // Reflog times are not monotonic (a committer date set by hand, clock skew, imported
    // commits), so an old entry says nothing about the ones before it: every line is read
    // (within the byte budget) and the newest `keep` by time are kept.
    let mut found = Vec::new();
    let mut seq = 0;
    while let Some((offset, line)) = lines
        .next(budget)
        .map_err(|e| format!("{name} reflog: {e}"))?
    {
        let entry = reflog_file::parse_line(&line, offset as usize)
            .map_err(|e: ParseError| format!("{name} reflog: {e}"))?;
        let ms = entry.time.saturating_mul(1000);
        if !window.contains(ms) {
            continue;
        }
        scan.total += 1;
        found.push(Raw {
            ref_name: name.clone(),
            ref_bytes: ref_bytes.clone(),
            ref_rank: rank,
            seq,
            old: (!entry.old.is_zero()).then_some(entry.old),
            new: (!entry.new.is_zero()).then_some(entry.new),
            time: entry.time,
            tz: entry.tz,
            name: entry.name,
            email: entry.email,
            message: entry.message,
        });
        seq += 1;
        if found.len() >= 2 * window.keep.max(1) {
            keep_newest(&mut found, window.keep);
        }
    }
    keep_newest(&mut found, window.keep);
    scan.events.extend(found);
    scan.partial |= lines.stopped;
    Ok(())
}

/// Keeps the `keep` newest moves by time (ties: nearer the reflog's end first), so memory
/// stays bounded while a whole reflog is read.
fn keep_newest(found: &mut Vec<Raw>, keep: usize) {
    if found.len() > keep {
        found.sort_by_key(|r| (std::cmp::Reverse(r.time), r.seq));
        found.truncate(keep);
    }
}
