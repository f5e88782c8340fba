//! Parsed trees kept across calls, keyed by blob id and grammar: a blob's tree never
//! changes, so a repeated call on the same base (or the same commit) skips reading and
//! parsing it. Bounded by an estimate of the memory held, least recently used out first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::languages::Lang;
use super::parse::{ParseFailure, Parsed};

/// What the cache may hold, estimated as [`COST_PER_BYTE`] per source byte.
const CAPACITY: usize = 96 * 1024 * 1024;
/// A tree costs a few times its source; this errs on the high side.
const COST_PER_BYTE: usize = 8;

pub type Entry = Arc<Result<Parsed, ParseFailure>>;
type Key = (String, Lang);

struct Lru {
    entries: HashMap<Key, (Entry, u64, usize)>,
    tick: u64,
    held: usize,
}

fn lru() -> &'static Mutex<Lru> {
    static CACHE: OnceLock<Mutex<Lru>> = OnceLock::new();
    CACHE.get_or_init(|| {
        Mutex::new(Lru {
            entries: HashMap::new(),
            tick: 0,
            held: 0,
        })
    })
}

/// The cached parse of blob `oid` as `lang`.
pub fn get(oid: &str, lang: Lang) -> Option<Entry> {
    let mut lru = lru().lock().ok()?;
    lru.tick += 1;
    let tick = lru.tick;
    let slot = lru.entries.get_mut(&(oid.to_owned(), lang))?;
    slot.1 = tick;
    Some(Arc::clone(&slot.0))
}

/// Keeps a parse of blob `oid`, unless it failed in a way that might not repeat.
pub fn put(oid: &str, lang: Lang, entry: &Entry) {
    let cost = match entry.as_ref() {
        Ok(parsed) => parsed.source.len().max(1) * COST_PER_BYTE,
        Err(failure) if failure.is_stable() => 64,
        Err(_) => return,
    };
    if cost > CAPACITY / 4 {
        return;
    }
    let Ok(mut lru) = lru().lock() else {
        return;
    };
    lru.tick += 1;
    let tick = lru.tick;
    if let Some((_, _, old)) = lru
        .entries
        .insert((oid.to_owned(), lang), (Arc::clone(entry), tick, cost))
    {
        lru.held -= old;
    }
    lru.held += cost;
    while lru.held > CAPACITY {
        let Some(oldest) = lru
            .entries
            .iter()
            .min_by_key(|(_, (_, t, _))| *t)
            .map(|(k, _)| k.clone())
        else {
            break;
        };
        if let Some((_, _, freed)) = lru.entries.remove(&oldest) {
            lru.held -= freed;
        }
    }
}

/// Drops every cached tree (benchmarks measure cold calls this way).
pub fn clear() {
    if let Ok(mut lru) = lru().lock() {
        lru.entries.clear();
        lru.held = 0;
    }
}

/// Keeps only the trees of blobs `keep` accepts (benchmarks measure warm calls this way:
/// the base side cached, the new side not).
pub fn retain(keep: impl Fn(&str) -> bool) {
    if let Ok(mut lru) = lru().lock() {
        lru.entries.retain(|(oid, _), _| keep(oid));
        lru.held = lru.entries.values().map(|(_, _, cost)| cost).sum();
    }
}
