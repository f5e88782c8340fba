//! Which configured drivers could start a program during a read, found by asking git.
//!
//! `git config --list --show-origin --show-scope --includes -z` is read for the
//! repository and for every checked-out submodule a parent `status` or `diff` recurses
//! into ([`super::gitlinks`]; a child git there reads the submodule's own configuration). Filter drivers the
//! repositories define (local and worktree scope) and merge drivers of any scope are
//! disarmed. The overrides travel as `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/
//! `GIT_CONFIG_VALUE_n`, never as `-c key=value`: a driver name may contain `=`, and git
//! splits `-c` at the first one. Git hands those variables on to the child gits it starts
//! in submodules, so one set disarms the whole tree. The same listing tells whether the
//! repository's `core.fsmonitor` is git's builtin daemon rather than a hook program.
//!
//! Every file git read (includes followed), every include target named (present or not)
//! and every git directory read (its mtime moves when its index is rewritten, which is
//! when a gitlink may appear) is returned as `watched`, so a cached answer is dropped as
//! soon as any of them changes.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::error::GitError;
use super::{gitlinks, trust};
use crate::process::{Invocation, Program};

/// How much `git config --list` output one repository may have before we refuse it.
const LIST_CAP: usize = 512 * 1024;
/// More drivers than this cannot be passed to git as overrides; the repository is refused.
const MAX_DRIVERS: usize = 1000;
/// How deep and how many submodules are searched for drivers; past either, refuse.
const MAX_DEPTH: usize = 5;
const MAX_SUBMODULES: usize = 200;

/// What was found for one repository and its submodules.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Names of filter drivers defined by the repository or a submodule, sorted.
    pub filters: Vec<Vec<u8>>,
    /// The commands in force for each of those filters (`clean`, `smudge`, `process`),
    /// the last value git read for each key winning, as it does for git.
    pub commands: BTreeMap<Vec<u8>, BTreeMap<Vec<u8>, Vec<u8>>>,
    /// `merge.<name>.driver` keys, from any scope, sorted.
    pub merges: Vec<Vec<u8>>,
    /// Files whose change may change the answer.
    pub watched: Vec<PathBuf>,
    /// The repository's own `core.fsmonitor` names git's builtin daemon (a boolean true),
    /// not a hook program; the last value git read wins, as it does for git.
    pub builtin_fsmonitor: bool,
    /// The user's `core.excludesFile` and `core.attributesFile` as configured (the last
    /// value git read), for a cached status to key on.
    pub excludes_file: Option<Vec<u8>>,
    pub attributes_file: Option<Vec<u8>>,
    /// Some setting makes git compare a worktree file with its index entry other than by
    /// its stat data and bytes (conversions, case folding, ignored modes): a reader that
    /// judges files itself must leave them to git.
    pub converts_files: bool,
    /// The user's home, where a `~/` include points.
    home: Option<PathBuf>,
}

impl Found {
    /// Config overrides (key, value) that leave every found driver without a command,
    /// except filters named in `trusted` whose every command passes [`trust::check`]
    /// against `forbidden`.
    pub fn overrides(
        &self,
        trusted: &[String],
        forbidden: &[PathBuf],
        search_path: &OsStr,
    ) -> Vec<(OsString, OsString)> {
        let mut out = Vec::new();
        for name in &self.filters {
            if trusted.iter().any(|t| t.as_bytes() == name.as_slice())
                && self.commands.get(name).is_some_and(|commands| {
                    commands
                        .values()
                        .filter(|c| !c.is_empty())
                        .all(|c| trust::check(c, forbidden, search_path).is_ok())
                })
            {
                continue;
            }
            for var in ["clean", "smudge", "process"] {
                // An empty command makes git skip the filter.
                out.push((key(b"filter.", name, var), OsString::new()));
            }
            // Keeps git from refusing to go on without the filter it was told is required.
            out.push((key(b"filter.", name, "required"), OsString::from("false")));
        }
        for merge in &self.merges {
            // Without a command the driver cannot run; git reports the path as conflicted.
            out.push((OsString::from_vec(merge.clone()), OsString::new()));
        }
        out
    }
}

fn key(section: &[u8], name: &[u8], var: &str) -> OsString {
    let mut k = section.to_vec();
    k.extend_from_slice(name);
    k.push(b'.');
    k.extend_from_slice(var.as_bytes());
    OsString::from_vec(k)
}

/// Finds the drivers configured for the repository git finds from `dir`.
pub(crate) async fn own(
    dir: &Path,
    home: Option<&Path>,
    cancel: &CancellationToken,
) -> Result<Found, GitError> {
    let mut found = Found {
        home: home.map(Path::to_path_buf),
        ..Found::default()
    };
    read_config(dir, &[], true, &mut found, cancel).await?;
    Ok(found)
}

/// Adds the filter drivers of every checked-out submodule under `worktree` (whose git
/// directory is `git_dir`), recursively.
pub(crate) async fn submodules(
    worktree: &Path,
    git_dir: &Path,
    found: &mut Found,
    cancel: &CancellationToken,
) -> Result<(), GitError> {
    if !gitlinks::may_hold_gitlinks(git_dir).await {
        return Ok(());
    }
    let mut level = vec![worktree.to_path_buf()];
    let mut seen = 0usize;
    for depth in 0..=MAX_DEPTH {
        let mut next = Vec::new();
        for top in &level {
            for sub in gitlinks::checked_out(top, cancel).await? {
                seen += 1;
                if depth == MAX_DEPTH || seen > MAX_SUBMODULES {
                    return Err(refused(
                        "the repository nests more submodules than gitward checks for drivers",
                    ));
                }
                read_config(&sub, &[], false, found, cancel).await?;
                next.push(sub);
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    found.filters.sort_unstable();
    found.filters.dedup();
    Ok(())
}

fn refused(why: &str) -> GitError {
    GitError::failed(&["git".to_owned(), "config".to_owned()], None, why)
}

/// Reads one repository's configuration into `found`. Merge drivers count only for the
/// repository itself (`with_merges`): `merge-tree` never recurses into submodules.
async fn read_config(
    dir: &Path,
    extra: &[&str],
    with_merges: bool,
    found: &mut Found,
    cancel: &CancellationToken,
) -> Result<(), GitError> {
    let out = Invocation::new(Program::Git)
        .dir(dir)
        .args(extra.iter().copied())
        .args([
            "--no-optional-locks",
            "config",
            "--list",
            "--show-origin",
            "--show-scope",
            "--includes",
            "-z",
        ])
        .capture(LIST_CAP, cancel)
        .await
        .map_err(|e| GitError::run(&["git".to_owned(), "config".to_owned()], e))?;
    if out.sink.truncated {
        // A cut list would leave the rest armed: refuse rather than run them.
        return Err(refused(
            "the configuration is too large to check for filter and merge drivers",
        ));
    }
    // A failure here (an unreadable or broken config) surfaces in the real command that
    // follows, which reads the same files.
    if !out.success() {
        return Ok(());
    }
    parse(dir, &out.sink.bytes, with_merges, found);
    if found.filters.len() + found.merges.len() > MAX_DRIVERS {
        return Err(refused(
            "the configuration defines more filter and merge drivers than can be disarmed",
        ));
    }
    Ok(())
}

/// Parses `scope NUL origin NUL key [LF value] NUL` records.
fn parse(dir: &Path, bytes: &[u8], with_merges: bool, found: &mut Found) {
    let mut fields = bytes.split(|b| *b == 0);
    while let (Some(scope), Some(origin), Some(entry)) =
        (fields.next(), fields.next(), fields.next())
    {
        let (key, value) = match entry.iter().position(|b| *b == b'\n') {
            Some(nl) => (&entry[..nl], entry.get(nl + 1..)),
            None => (entry, None),
        };
        let file = origin
            .strip_prefix(b"file:")
            .map(|p| dir.join(OsStr::from_bytes(p)));
        if let Some(file) = &file
            && !found.watched.contains(file)
        {
            found.watched.push(file.clone());
            // A submodule's git directory changes when its index does, which is when a
            // gitlink may appear inside it.
            if scope == b"local"
                && let Some(dir) = file.parent()
            {
                found.watched.push(dir.to_path_buf());
            }
        }
        if let (Some(value), Some(file)) = (value, &file)
            && is_include(key)
            && let Some(target) = include_target(file, value, found.home.as_deref())
        {
            found.watched.push(target);
        }
        if scope == b"command" {
            continue;
        }
        if with_merges && key == b"core.fsmonitor" {
            found.builtin_fsmonitor = is_true(value);
        }
        if with_merges && key == b"core.excludesfile" {
            found.excludes_file = value.map(<[u8]>::to_vec);
        }
        if with_merges && key == b"core.attributesfile" {
            found.attributes_file = value.map(<[u8]>::to_vec);
        }
        if with_merges && converts_files(key, value) {
            found.converts_files = true;
        }
        if let Some(rest) = key.strip_prefix(b"filter.") {
            let Some(dot) = rest.iter().rposition(|b| *b == b'.') else {
                continue;
            };
            let (name, var) = (&rest[..dot], &rest[dot + 1..]);
            if matches!(scope, b"local" | b"worktree") {
                found.filters.push(name.to_vec());
            }
            if matches!(var, b"clean" | b"smudge" | b"process") {
                found
                    .commands
                    .entry(name.to_vec())
                    .or_default()
                    .insert(var.to_vec(), value.unwrap_or_default().to_vec());
            }
        } else if with_merges && key.starts_with(b"merge.") && key.ends_with(b".driver") {
            found.merges.push(key.to_vec());
        }
    }
    found.filters.sort_unstable();
    found.filters.dedup();
    found.merges.sort_unstable();
    found.merges.dedup();
}

/// A config value git reads as boolean true (a key without `=` is true). Anything else,
/// a number spelled otherwise included, counts as not true: the safe side, since only
/// true is ever passed on.
fn is_true(value: Option<&[u8]>) -> bool {
    value.is_none_or(|v| {
        let v = v.to_ascii_lowercase();
        matches!(v.as_slice(), b"true" | b"yes" | b"on" | b"1")
    })
}

/// Whether `key = value` changes how git compares worktree files with the index. Any
/// filter key counts, whatever its scope: a user's filter applies through attributes.
fn converts_files(key: &[u8], value: Option<&[u8]>) -> bool {
    let is_false = value.is_some_and(|v| {
        let v = v.to_ascii_lowercase();
        matches!(v.as_slice(), b"false" | b"no" | b"off" | b"0" | b"")
    });
    match key {
        b"core.attributesfile" | b"core.eol" | b"core.checkroundtripencoding" => true,
        b"core.autocrlf" => !is_false,
        b"core.ignorecase" | b"core.precomposeunicode" => !is_false,
        b"core.filemode" | b"core.symlinks" => !is_true(value),
        _ => key.starts_with(b"filter."),
    }
}

fn is_include(key: &[u8]) -> bool {
    key == b"include.path" || (key.starts_with(b"includeif.") && key.ends_with(b".path"))
}

/// Where an include directive points, resolved the way git resolves it.
fn include_target(file: &Path, value: &[u8], home: Option<&Path>) -> Option<PathBuf> {
    let value = Path::new(OsStr::from_bytes(value));
    if let Ok(rest) = value.strip_prefix("~") {
        return home.map(|home| home.join(rest));
    }
    if value.is_absolute() {
        return Some(value.to_path_buf());
    }
    file.parent().map(|dir| dir.join(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(bytes: &[u8]) -> Found {
        let mut f = Found::default();
        parse(Path::new("/r"), bytes, true, &mut f);
        f
    }

    #[test]
    fn repository_filters_and_all_merge_drivers_are_disarmed() {
        let f = found(
            b"local\0file:.git/config\0filter.evil.clean\n/x\0\
worktree\0file:.git/config.worktree\0filter.evil.smudge\n/x\0\
local\0file:.git/config\0filter.a.b.process\n/x\0\
local\0file:.git/config\0filter.a=b.clean\n/x\0\
global\0file:/h/.gitconfig\0filter.lfs.clean\ngit-lfs clean\0\
global\0file:/h/.gitconfig\0merge.theirs.driver\ntrue\0\
local\0file:.git/config\0merge.m=x.driver\n/x\0\
command\0command line:\0filter.cmd.clean\n\0",
        );
        assert_eq!(
            f.filters,
            vec![b"a.b".to_vec(), b"a=b".to_vec(), b"evil".to_vec()]
        );
        assert_eq!(
            f.merges,
            vec![
                b"merge.m=x.driver".to_vec(),
                b"merge.theirs.driver".to_vec()
            ]
        );
        let o = f.overrides(&[], &[], OsStr::new(""));
        assert!(o.contains(&("filter.a=b.clean".into(), "".into())));
        assert!(o.contains(&("filter.a=b.required".into(), "false".into())));
        assert!(o.contains(&("merge.m=x.driver".into(), "".into())));
        assert!(!o.iter().any(|(k, _)| k.to_string_lossy().contains("lfs")));
        assert_eq!(o.len(), 3 * 4 + 2);
        // A trusted filter stays armed only when its command is a plain program outside
        // the forbidden roots: `/x` does not exist.
        assert_eq!(
            f.overrides(&["evil".into()], &[], OsStr::new("")).len(),
            3 * 4 + 2
        );
    }

    #[test]
    fn only_a_boolean_true_fsmonitor_is_the_builtin_daemon() {
        let cases: [(&[u8], bool); 7] = [
            (b"global\0file:/h/.gitconfig\0core.fsmonitor\ntrue\0", true),
            (b"local\0file:.git/config\0core.fsmonitor\0", true),
            (b"local\0file:.git/config\0core.fsmonitor\nYes\0", true),
            (
                b"local\0file:.git/config\0core.fsmonitor\n.git/hooks/query-watchman\0",
                false,
            ),
            (b"local\0file:.git/config\0core.fsmonitor\n\0", false),
            // The last value read wins; the command line is never the user's choice.
            (
                b"global\0file:/h/.gitconfig\0core.fsmonitor\ntrue\0\
local\0file:.git/config\0core.fsmonitor\nfalse\0",
                false,
            ),
            (b"command\0command line:\0core.fsmonitor\ntrue\0", false),
        ];
        for (bytes, builtin) in cases {
            assert_eq!(found(bytes).builtin_fsmonitor, builtin, "{bytes:?}");
        }
        let mut sub = Found::default();
        parse(Path::new("/r"), cases[0].0, false, &mut sub);
        assert!(
            !sub.builtin_fsmonitor,
            "a submodule's setting is not the repository's"
        );
    }

    #[test]
    fn settings_that_change_how_git_reads_files_are_noticed() {
        let cases: [(&[u8], bool); 10] = [
            (b"local\0file:.git/config\0core.filemode\ntrue\0", false),
            (b"local\0file:.git/config\0core.filemode\nfalse\0", true),
            (b"local\0file:.git/config\0core.autocrlf\nfalse\0", false),
            (b"global\0file:/h/.gitconfig\0core.autocrlf\ninput\0", true),
            (
                b"global\0file:/h/.gitconfig\0core.attributesfile\n~/a\0",
                true,
            ),
            (b"local\0file:.git/config\0core.ignorecase\0", true),
            (b"local\0file:.git/config\0core.symlinks\nno\0", true),
            (
                b"global\0file:/h/.gitconfig\0filter.lfs.required\ntrue\0",
                true,
            ),
            (b"local\0file:.git/config\0core.eol\ncrlf\0", true),
            (b"command\0command line:\0core.autocrlf\ntrue\0", false),
        ];
        for (bytes, converts) in cases {
            assert_eq!(found(bytes).converts_files, converts, "{bytes:?}");
        }
    }

    #[test]
    fn a_trusted_filter_with_a_program_outside_stays_armed() {
        let f = found(
            b"local\0file:.git/config\0filter.up.clean\n\"/bin/cat\" -u\0\
local\0file:.git/config\0filter.up.smudge\ncat\0\
local\0file:.git/config\0filter.bad.clean\nsh -c 'x'\0",
        );
        let trusted = ["up".to_owned(), "bad".to_owned()];
        let path = OsStr::new("/usr/bin:/bin");
        let o = f.overrides(&trusted, &[], path);
        assert!(
            !o.iter()
                .any(|(k, _)| k.to_string_lossy().starts_with("filter.up."))
        );
        assert!(o.contains(&("filter.bad.clean".into(), "".into())));
        let bin = std::fs::canonicalize("/bin/cat").unwrap();
        let o = f.overrides(&trusted, &[bin.parent().unwrap().to_path_buf()], path);
        assert!(o.contains(&("filter.up.clean".into(), "".into())));
    }

    #[test]
    fn every_file_read_and_every_include_target_is_watched() {
        let f = found(
            b"local\0file:.git/config\0include.path\nextra.cfg\0\
local\0file:.git/config\0includeif.onbranch:x.path\n/abs/other.cfg\0\
local\0file:.git/extra.cfg\0x.flag\0",
        );
        assert_eq!(
            f.watched,
            vec![
                PathBuf::from("/r/.git/config"),
                PathBuf::from("/r/.git"),
                PathBuf::from("/r/.git/extra.cfg"),
                PathBuf::from("/abs/other.cfg"),
            ]
        );
    }
}
