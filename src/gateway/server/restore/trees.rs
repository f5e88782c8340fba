//! The index's tree and the worktree's tree of a restore point, built from the index
//! entries read in process and the worktree changes already listed and stored: only the
//! directories that differ from a tree git already knows (the index's cache tree) are
//! written, one `mktree` per directory depth, deepest first. The result is the tree
//! `write-tree` would write of the index, and of a copy of it with the changes entered.
//!
//! Whenever the shape is one this builder does not take on (a conflict the listing did
//! not name, a name that is both a file and a directory, an empty top, a deep chain of
//! changed directories), it answers `None` and the capture writes the trees through an
//! index copy as git would.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::git::index_entries::IndexEntries;
use crate::git::mktree::{self, TreeEntry};
use crate::git::{Git, Oid};
use crate::operation::OpError;

const MODE_TREE: u32 = 0o040000;
/// More directory depths than this are written through an index copy instead: each depth
/// is one process in a row.
const MAX_DEPTHS: usize = 6;

/// The final state of a changed worktree path: its mode and blob, or `None` when gone.
pub type Change = (String, Option<(u32, Oid)>);

/// The two trees: the index's (`None` when it has a conflict) and the worktree's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub index: Option<Oid>,
    pub worktree: Oid,
}

fn parent(path: &[u8]) -> &[u8] {
    path.iter()
        .rposition(|b| *b == b'/')
        .map_or(&[][..], |i| &path[..i])
}

fn base(path: &[u8]) -> &[u8] {
    path.iter()
        .rposition(|b| *b == b'/')
        .map_or(path, |i| &path[i + 1..])
}

fn depth(dir: &[u8]) -> usize {
    if dir.is_empty() {
        0
    } else {
        1 + dir.iter().filter(|b| **b == b'/').count()
    }
}

/// A directory to write: its files, and the names of its subdirectories.
type Dir<'a> = (Vec<TreeEntry>, BTreeSet<&'a [u8]>);

/// One side's directories to write.
#[derive(Default)]
struct Plan<'a> {
    dirs: BTreeMap<&'a [u8], Dir<'a>>,
}

impl<'a> Plan<'a> {
    /// The plan for `files` (path, mode, blob), writing every directory that is not in
    /// `cached` or is in `touched`, and every directory above one written.
    fn new(
        files: &[(&'a [u8], u32, &'a Oid)],
        cached: &HashMap<Vec<u8>, Oid>,
        touched: &[&'a [u8]],
    ) -> Plan<'a> {
        let mut plan = Plan::default();
        let mark = |mut dir: &'a [u8], plan: &mut Plan<'a>| loop {
            if plan.dirs.contains_key(dir) {
                break;
            }
            plan.dirs.insert(dir, Default::default());
            if dir.is_empty() {
                break;
            }
            dir = parent(dir);
        };
        for path in touched {
            mark(parent(path), &mut plan);
        }
        let mut last: Option<&[u8]> = None;
        for (path, _, _) in files {
            let dir = parent(path);
            if last == Some(dir) {
                continue;
            }
            last = Some(dir);
            let mut d = dir;
            loop {
                if !cached.contains_key(d) {
                    mark(d, &mut plan);
                    break;
                }
                if d.is_empty() {
                    break;
                }
                d = parent(d);
            }
        }
        plan.fill(files);
        plan
    }

    /// Puts each file in its directory when that is written, and each directory under
    /// a written one among that one's subdirectories.
    fn fill(&mut self, files: &[(&'a [u8], u32, &'a Oid)]) {
        let mut last: Option<&[u8]> = None;
        for (path, mode, oid) in files {
            let dir = parent(path);
            if let Some((entries, _)) = self.dirs.get_mut(dir) {
                entries.push(TreeEntry {
                    mode: *mode,
                    oid: (*oid).clone(),
                    name: base(path).to_vec(),
                });
            }
            if last == Some(dir) {
                continue;
            }
            last = Some(dir);
            let mut d = dir;
            while !d.is_empty() {
                let up = parent(d);
                if let Some((_, subdirs)) = self.dirs.get_mut(up) {
                    subdirs.insert(base(d));
                }
                d = up;
            }
        }
    }
}

/// Builds both trees; `None` when the capture must write them through an index copy.
pub async fn build(
    git: &Git<'_>,
    index: &IndexEntries,
    changes: &[Change],
) -> Result<Option<Built>, OpError> {
    let changed: HashMap<&[u8], &Option<(u32, Oid)>> =
        changes.iter().map(|(p, s)| (p.as_bytes(), s)).collect();
    if changed.len() != changes.len()
        || index
            .conflicted
            .iter()
            .any(|p| !changed.contains_key(p.as_slice()))
    {
        return Ok(None);
    }
    let staged: Vec<(&[u8], u32, &Oid)> = index
        .files
        .iter()
        .map(|e| (e.path.as_slice(), e.mode, &e.oid))
        .collect();
    let mut worktree: Vec<(&[u8], u32, &Oid)> = staged
        .iter()
        .filter(|(p, _, _)| !changed.contains_key(p))
        .copied()
        .collect();
    worktree.extend(
        changes
            .iter()
            .filter_map(|(p, s)| s.as_ref().map(|(m, o)| (p.as_bytes(), *m, o))),
    );
    let touched: Vec<&[u8]> = changed.keys().copied().collect();
    let sides = [
        index
            .conflicted
            .is_empty()
            .then(|| Plan::new(&staged, &index.cached, &[])),
        Some(Plan::new(&worktree, &index.cached, &touched)),
    ];
    let Some(roots) = write_levels(git, &sides, &index.cached).await? else {
        return Ok(None);
    };
    match roots.as_slice() {
        [index, Some(worktree)] => Ok(Some(Built {
            index: index.clone(),
            worktree: worktree.clone(),
        })),
        _ => Ok(None),
    }
}

/// Writes the planned directories of every side, one `mktree` per depth, deepest first;
/// each side's top tree (`None` for a side not planned). `None` overall when a directory
/// has a name twice, the top would be empty, or there are too many depths.
async fn write_levels(
    git: &Git<'_>,
    sides: &[Option<Plan<'_>>],
    cached: &HashMap<Vec<u8>, Oid>,
) -> Result<Option<Vec<Option<Oid>>>, OpError> {
    let deepest = sides
        .iter()
        .flatten()
        .flat_map(|p| p.dirs.keys().map(|d| depth(d)))
        .max()
        .unwrap_or(0);
    if deepest >= MAX_DEPTHS {
        return Ok(None);
    }
    // Per side, the trees written so far (`None`: the directory came out empty).
    let mut written: Vec<HashMap<&[u8], Option<Oid>>> = vec![HashMap::new(); sides.len()];
    for level in (0..=deepest).rev() {
        let mut batch: Vec<Vec<TreeEntry>> = Vec::new();
        let mut slots: HashMap<Vec<TreeEntry>, usize> = HashMap::new();
        let mut wanted: Vec<(usize, &[u8], Option<usize>)> = Vec::new();
        for (side, plan) in sides.iter().enumerate() {
            let Some(plan) = plan else { continue };
            for (dir, (files, subdirs)) in plan.dirs.iter().filter(|(d, _)| depth(d) == level) {
                let Some(mut entries) = entries_of(dir, files, subdirs, &written[side], cached)
                else {
                    return Ok(None);
                };
                if entries.is_empty() {
                    if dir.is_empty() {
                        return Ok(None);
                    }
                    wanted.push((side, dir, None));
                    continue;
                }
                entries.sort_by(|a, b| a.name.cmp(&b.name));
                if entries.windows(2).any(|w| w[0].name == w[1].name) {
                    return Ok(None);
                }
                let slot = *slots.entry(entries.clone()).or_insert_with(|| {
                    batch.push(entries);
                    batch.len() - 1
                });
                wanted.push((side, dir, Some(slot)));
            }
        }
        let oids = mktree::write(git, &batch).await?;
        for (side, dir, slot) in wanted {
            written[side].insert(dir, slot.and_then(|s| oids.get(s).cloned()));
        }
    }
    Ok(Some(
        sides
            .iter()
            .zip(&written)
            .map(|(plan, done)| {
                plan.as_ref()?;
                done.get(&b""[..])
                    .cloned()
                    .flatten()
                    .or_else(|| cached.get(&b""[..]).cloned())
            })
            .collect(),
    ))
}

/// The entries of `dir`: its files, and each subdirectory as written or as cached (left
/// out when it came out empty). `None` when a subdirectory has neither.
fn entries_of(
    dir: &[u8],
    files: &[TreeEntry],
    subdirs: &BTreeSet<&[u8]>,
    written: &HashMap<&[u8], Option<Oid>>,
    cached: &HashMap<Vec<u8>, Oid>,
) -> Option<Vec<TreeEntry>> {
    let mut entries = files.to_vec();
    for name in subdirs {
        let full: Vec<u8> = if dir.is_empty() {
            name.to_vec()
        } else {
            [dir, b"/", name].concat()
        };
        let oid = match written.get(full.as_slice()) {
            Some(Some(oid)) => oid.clone(),
            Some(None) => continue,
            None => cached.get(&full)?.clone(),
        };
        entries.push(TreeEntry {
            mode: MODE_TREE,
            oid,
            name: name.to_vec(),
        });
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_directory_and_name() {
        assert_eq!(parent(b"a/b/c"), b"a/b");
        assert_eq!(parent(b"c"), b"");
        assert_eq!(base(b"a/b/c"), b"c");
        assert_eq!(base(b"c"), b"c");
        assert_eq!(depth(b""), 0);
        assert_eq!(depth(b"a/b"), 2);
    }

    #[test]
    fn only_uncached_and_touched_directories_are_planned() {
        let oid = Oid::parse(&"1".repeat(40)).unwrap();
        let files: Vec<(&[u8], u32, &Oid)> = vec![
            (b"a/x", 0o100644, &oid),
            (b"b/c/y", 0o100644, &oid),
            (b"b/z", 0o100644, &oid),
            (b"top", 0o100644, &oid),
        ];
        let cached: HashMap<Vec<u8>, Oid> = [&b""[..], b"a", b"b/c"]
            .iter()
            .map(|d| (d.to_vec(), oid.clone()))
            .collect();
        let plan = Plan::new(&files, &cached, &[]);
        let dirs: Vec<&[u8]> = plan.dirs.keys().copied().collect();
        assert_eq!(
            dirs,
            [&b""[..], b"b"],
            "b is not cached, so the top is written"
        );
        let (files_b, subdirs_b) = &plan.dirs[&b"b"[..]];
        assert_eq!(files_b.len(), 1);
        assert_eq!(subdirs_b.iter().copied().collect::<Vec<_>>(), [&b"c"[..]]);
        let (files_top, subdirs_top) = &plan.dirs[&b""[..]];
        assert_eq!(files_top.len(), 1);
        assert_eq!(subdirs_top.len(), 2);
        let touched = Plan::new(&files, &cached, &[b"a/new"]);
        assert!(touched.dirs.contains_key(&b"a"[..]));
    }
}
