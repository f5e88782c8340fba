//! One call's work list: which files fall back before any reading (unmerged, binary, not
//! a regular file, no grammar), where each remaining side comes from (the tree cache, a
//! blob, the working tree), and then, off the async runtime, the parses and answers under
//! the call's deadline.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::answer::FileAnswer;
use super::cache::{self, Entry};
use super::file::{self, Sides};
use super::languages::Lang;
use super::parse::{self, ParseFailure};
use super::patch::FileDiff;
use super::source::{self, Side};
use super::{CALL_BUDGET, PARSE_BUDGET};
use crate::progress::{Counter, Progress};

/// Where one side's tree comes from.
enum From {
    Absent,
    Cached(Entry),
    /// Blob contents git's patch held whole, checked against the blob id.
    Text(Vec<u8>, String),
    Blob(String),
    /// A blob as `cat-file` gave it.
    Read(Option<Side>, String),
    Worktree,
}

enum Step {
    Fallback(String),
    Analyze { lang: Lang, old: From, new: From },
}

pub struct Plan {
    steps: Vec<(FileDiff, Step)>,
}

impl Plan {
    pub fn new(files: Vec<FileDiff>) -> Plan {
        let steps = files
            .into_iter()
            .map(|mut f| {
                let step = step(&mut f);
                (f, step)
            })
            .collect();
        Plan { steps }
    }

    /// Blob ids the cache does not hold.
    pub fn to_fetch(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (_, step) in &self.steps {
            if let Step::Analyze { old, new, .. } = step {
                for side in [old, new] {
                    if let From::Blob(oid) = side
                        && !out.contains(oid)
                    {
                        out.push(oid.clone());
                    }
                }
            }
        }
        out
    }

    /// Parses and answers every file, a few at a time; the flag says the deadline cut the
    /// work short. The workers are the runtime's blocking threads: they outlive the call,
    /// and so do their parsers, so a call starts no thread of its own.
    pub async fn finish(
        self,
        mut fetched: HashMap<String, Side>,
        worktree: Option<PathBuf>,
        deadline: Instant,
        progress: &Progress,
    ) -> Result<(Vec<FileAnswer>, bool), tokio::task::JoinError> {
        let mut uses: HashMap<String, usize> = HashMap::new();
        for (_, step) in &self.steps {
            if let Step::Analyze { old, new, .. } = step {
                for side in [old, new] {
                    if let From::Blob(oid) = side {
                        *uses.entry(oid.clone()).or_default() += 1;
                    }
                }
            }
        }
        let paths: Vec<(String, Option<String>)> =
            self.steps.iter().map(|(d, _)| names(d)).collect();
        let mut take = |from: From| match from {
            From::Blob(oid) => From::Read(read(&mut fetched, &mut uses, &oid), oid),
            other => other,
        };
        let jobs: Vec<Mutex<Option<(FileDiff, Step)>>> = self
            .steps
            .into_iter()
            .map(|(diff, step)| {
                let step = match step {
                    Step::Analyze { lang, old, new } => Step::Analyze {
                        lang,
                        old: take(old),
                        new: take(new),
                    },
                    other => other,
                };
                Mutex::new(Some((diff, step)))
            })
            .collect();
        let done = Counter::start(progress, jobs.len() as u64, |done, total| {
            format!("semantic diff: {done} of {total} files")
        });
        let work = Arc::new(Work {
            done,
            answers: jobs.iter().map(|_| Mutex::new(None)).collect(),
            jobs,
            next: AtomicUsize::new(0),
            sources: Sources {
                worktree,
                deadline,
                spent: AtomicBool::new(false),
            },
        });
        let workers = cores().min(MAX_WORKERS).min(work.jobs.len());
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let work = Arc::clone(&work);
                tokio::task::spawn_blocking(move || work.run())
            })
            .collect();
        for handle in handles {
            handle.await?;
        }
        let out = work
            .answers
            .iter()
            .zip(paths)
            .map(|(slot, (path, old_path))| {
                let answer = slot.lock().ok().and_then(|mut s| s.take());
                answer.unwrap_or_else(|| {
                    FileAnswer::fallback(path, old_path, "internal: no answer".into())
                })
            })
            .collect();
        Ok((out, work.sources.spent.load(Ordering::Relaxed)))
    }
}

/// One call's files, shared by the workers that answer them.
struct Work {
    jobs: Vec<Mutex<Option<(FileDiff, Step)>>>,
    answers: Vec<Mutex<Option<FileAnswer>>>,
    /// The next job a worker takes.
    next: AtomicUsize,
    sources: Sources,
    /// Files answered so far, for whoever watches the call.
    done: Counter,
}

impl Work {
    fn run(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let (Some(job), Some(slot)) = (self.jobs.get(i), self.answers.get(i)) else {
                break;
            };
            let Some((diff, step)) = job.lock().ok().and_then(|mut j| j.take()) else {
                continue;
            };
            let answer = self.sources.answer(diff, step);
            if let Ok(mut slot) = slot.lock() {
                *slot = Some(answer);
            }
            self.done.tick();
        }
    }
}

/// A file's path, and its old path when renamed or copied.
fn names(diff: &FileDiff) -> (String, Option<String>) {
    let path = String::from_utf8_lossy(&diff.path).into_owned();
    let old_path =
        (diff.old_path != diff.path).then(|| String::from_utf8_lossy(&diff.old_path).into_owned());
    (path, old_path)
}

/// Files parsed at once at most.
const MAX_WORKERS: usize = 4;

/// The cores this process may use, asked once: the answer reads cgroup files each time.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A fetched blob for one of its `uses`: moved out for the last, copied before that.
fn read(
    fetched: &mut HashMap<String, Side>,
    uses: &mut HashMap<String, usize>,
    oid: &str,
) -> Option<Side> {
    let left = uses.get_mut(oid)?;
    *left = left.saturating_sub(1);
    if *left == 0 {
        return fetched.remove(oid);
    }
    Some(match fetched.get(oid)? {
        Side::Bytes(bytes) => Side::Bytes(bytes.clone()),
        Side::TooLarge(size) => Side::TooLarge(*size),
        Side::OverBudget => Side::OverBudget,
        Side::Unreadable(why) => Side::Unreadable(why.clone()),
    })
}

/// What every file of one call shares.
struct Sources {
    worktree: Option<PathBuf>,
    deadline: Instant,
    /// Whether the deadline left a file unanswered.
    spent: AtomicBool,
}

impl Sources {
    fn answer(&self, diff: FileDiff, step: Step) -> FileAnswer {
        let (path, old_path) = names(&diff);
        let result = match step {
            Step::Fallback(reason) => Err(reason),
            Step::Analyze { .. } if Instant::now() >= self.deadline => {
                self.spent.store(true, Ordering::Relaxed);
                Err(format!(
                    "call-budget: the {} s budget of this call was spent before this file",
                    CALL_BUDGET.as_secs()
                ))
            }
            Step::Analyze { lang, old, new } => self.analyze(lang, &diff, old, new),
        };
        match result {
            Ok(mut answer) => {
                answer.path = path;
                answer.old_path = old_path;
                answer
            }
            Err(reason) => FileAnswer::fallback(path, old_path, reason),
        }
    }

    /// One file's answer; the new side is parsed from the old side's tree.
    fn analyze(
        &self,
        lang: Lang,
        diff: &FileDiff,
        old: From,
        new: From,
    ) -> Result<FileAnswer, String> {
        let old = self.resolve(old, lang, "old", diff, None)?;
        let new = self.resolve(new, lang, "new", diff, tree(old.as_ref()))?;
        let sides = Sides {
            old: tree(old.as_ref()),
            new: tree(new.as_ref()),
        };
        file::analyze(lang, diff, &sides)
    }

    /// One side's parse, or the reason the file falls back.
    fn resolve(
        &self,
        from: From,
        lang: Lang,
        side: &str,
        diff: &FileDiff,
        base: Option<&parse::Parsed>,
    ) -> Result<Option<Entry>, String> {
        let (bytes, oid) = match from {
            From::Absent => return Ok(None),
            From::Cached(entry) => return explain(entry, side).map(Some),
            From::Text(bytes, oid) => (Some(Side::Bytes(bytes)), Some(oid)),
            From::Read(bytes, oid) => (bytes, Some(oid)),
            From::Blob(oid) => (None, Some(oid)),
            From::Worktree => match &self.worktree {
                Some(root) => (Some(source::worktree_file(root, &diff.path)), None),
                None => (None, None),
            },
        };
        let bytes = match bytes {
            Some(Side::Bytes(bytes)) => bytes,
            Some(Side::TooLarge(size)) => {
                return Err(format!(
                    "too-large: {size} bytes ({side} side), over the {}-byte limit",
                    source::MAX_FILE_BYTES
                ));
            }
            Some(Side::OverBudget) => {
                return Err(format!(
                    "memory-budget: the call's {} MiB of source was spent before the {side} side",
                    source::CALL_BYTES / (1024 * 1024)
                ));
            }
            Some(Side::Unreadable(why)) => return Err(format!("unreadable: {side} side: {why}")),
            None => return Err(format!("unreadable: {side} side could not be read")),
        };
        if bytes.len() > source::MAX_FILE_BYTES {
            return Err(format!(
                "too-large: {} bytes ({side} side), over the {}-byte limit",
                bytes.len(),
                source::MAX_FILE_BYTES
            ));
        }
        let budget = PARSE_BUDGET.min(self.deadline.saturating_duration_since(Instant::now()));
        let base = base.map(|b| (b, diff.hunks.as_slice()));
        let entry: Entry = Arc::new(parse::parse_from(lang, bytes, budget, base));
        if let Some(oid) = oid {
            cache::put(&oid, lang, &entry);
        }
        explain(entry, side).map(Some)
    }
}

fn tree(entry: Option<&Entry>) -> Option<&parse::Parsed> {
    entry.and_then(|e| e.as_ref().as_ref().ok())
}

fn step(f: &mut FileDiff) -> Step {
    let regular = |mode: &str| matches!(mode, "100644" | "100755" | "000000");
    if f.status == b'U' {
        return Step::Fallback("unmerged: the path has unresolved conflicts".into());
    }
    if !regular(&f.old_mode) || !regular(&f.new_mode) {
        let mode = if regular(&f.old_mode) {
            &f.new_mode
        } else {
            &f.old_mode
        };
        let what = match mode.as_str() {
            "120000" => "a symbolic link",
            "160000" => "a submodule",
            _ => "not a regular file",
        };
        return Step::Fallback(format!("not-a-file: {what} (mode {mode})"));
    }
    if f.binary {
        return Step::Fallback("binary: git reports binary content".into());
    }
    let Some(lang) = Lang::for_path(&f.path) else {
        return Step::Fallback(
            "unsupported-language: no grammar compiled in for this file type".into(),
        );
    };
    if Lang::for_path(&f.old_path) != Some(lang) {
        return Step::Fallback("unsupported-language: the rename changes the language".into());
    }
    let side = |oid: &Option<String>, mode: &str, text: Option<Vec<u8>>| match oid {
        _ if mode == "000000" => From::Absent,
        Some(oid) => match (cache::get(oid, lang), text) {
            (Some(entry), _) => From::Cached(entry),
            (None, Some(text)) if source::is_blob(oid, &text) => From::Text(text, oid.clone()),
            (None, _) => From::Blob(oid.clone()),
        },
        None => From::Worktree,
    };
    let (old_text, new_text) = (f.old_text.take(), f.new_text.take());
    Step::Analyze {
        lang,
        old: side(&f.old_oid, &f.old_mode, old_text),
        new: side(&f.new_oid, &f.new_mode, new_text),
    }
}

/// A parse that failed becomes the file's fallback reason.
fn explain(entry: Entry, side: &str) -> Result<Entry, String> {
    match entry.as_ref() {
        Ok(_) => Ok(entry),
        Err(ParseFailure::Errors {
            count,
            line,
            column,
        }) => {
            let s = if *count == 1 { "" } else { "s" };
            Err(format!(
                "parse-error: {count} error{s} ({side} side), first at {line}:{column}"
            ))
        }
        Err(ParseFailure::TooSlow(budget)) => Err(format!(
            "parse-budget: parsing the {side} side took over {} ms",
            budget.as_millis()
        )),
        Err(ParseFailure::TooManyNodes(nodes)) => Err(format!(
            "node-budget: {nodes} nodes ({side} side), over the limit of {}",
            parse::MAX_NODES
        )),
        Err(ParseFailure::NoGrammar) => {
            Err("unsupported-language: the grammar could not be loaded".into())
        }
    }
}
