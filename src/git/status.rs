//! `git status --porcelain=v2 -z`: the one way gitward asks for the state of a working
//! tree.
//!
//! Callers say what they need as a [`StatusQuery`] and get the parsed model of
//! `crate::parse::status_v2` back; the argv is built here. A caller that wants to look at
//! entries while they stream (to keep memory flat past its own cap) hands in its own
//! record parser through [`StatusQuery::stream`].

use std::ffi::OsString;

use super::status_cache::{self, Lookup, Tee};
use super::{Git, GitError, RepoRelPath};
use crate::parse::status_v2::Status;
use crate::parse::{RecordParser, Records};

/// `--untracked-files=<mode>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untracked {
    No,
    Normal,
    All,
}

/// `--ignore-submodules=<when>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoreSubmodules {
    None,
    Untracked,
    Dirty,
    All,
}

/// What to ask `git status` for. The default is the bare `status --porcelain=v2 -z`: no
/// headers, and untracked files and submodules as the user configured them.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatusQuery<'a> {
    /// The `# branch.*` headers (`--branch`).
    pub branch: bool,
    /// The `# stash` header (`--show-stash`).
    pub show_stash: bool,
    /// `None` keeps the user's `status.showUntrackedFiles`.
    pub untracked: Option<Untracked>,
    /// `None` keeps each submodule's configured `ignore`.
    pub ignore_submodules: Option<IgnoreSubmodules>,
    /// `Some` limits the listing to these paths, given as literal pathspecs after `--`;
    /// an empty list still ends the options and means the whole tree.
    pub paths: Option<&'a [RepoRelPath]>,
    /// Each rename as a deletion and an addition (`--no-renames`).
    pub no_renames: bool,
}

impl StatusQuery<'_> {
    /// Only the `# branch.*` headers and the entries, everything else as configured.
    pub fn with_branch() -> Self {
        StatusQuery {
            branch: true,
            ..StatusQuery::default()
        }
    }

    /// The arguments after `git` and its safety overrides.
    pub fn argv(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::with_capacity(8);
        if self.paths.is_some() {
            // A path is always a file name, never pathspec magic.
            args.push("--literal-pathspecs".into());
        }
        args.extend(["status", "--porcelain=v2", "-z"].map(OsString::from));
        if self.branch {
            args.push("--branch".into());
        }
        if self.show_stash {
            args.push("--show-stash".into());
        }
        if self.no_renames {
            args.push("--no-renames".into());
        }
        if let Some(when) = self.ignore_submodules {
            let when = match when {
                IgnoreSubmodules::None => "none",
                IgnoreSubmodules::Untracked => "untracked",
                IgnoreSubmodules::Dirty => "dirty",
                IgnoreSubmodules::All => "all",
            };
            args.push(format!("--ignore-submodules={when}").into());
        }
        if let Some(mode) = self.untracked {
            let mode = match mode {
                Untracked::No => "no",
                Untracked::Normal => "normal",
                Untracked::All => "all",
            };
            args.push(format!("--untracked-files={mode}").into());
        }
        if let Some(paths) = self.paths {
            args.push("--".into());
            args.extend(paths.iter().map(|p| OsString::from(p.as_str())));
        }
        args
    }

    /// Runs the query, keeping counts of everything and at most `max_entries` entries.
    pub async fn read(&self, git: &Git<'_>, max_entries: usize) -> Result<Status, GitError> {
        self.stream(git, Status::new(max_entries)).await
    }

    /// Runs the query, feeding each record to `parser` as it arrives. With the user's
    /// builtin fsmonitor daemon, an answer git gave before is replayed instead while
    /// nothing it depends on has changed (`super::status_cache`).
    pub async fn stream<P: RecordParser>(&self, git: &Git<'_>, parser: P) -> Result<P, GitError> {
        let argv = with_builtin_fsmonitor(git.repo.builtin_fsmonitor, self.argv());
        let plan = if git.repo.builtin_fsmonitor {
            match status_cache::lookup(git.repo, &argv).await {
                Lookup::Hit(output) => return Ok(Records::parse_all(parser, &output)?),
                Lookup::Miss(plan) => plan,
            }
        } else {
            None
        };
        let sink = Tee {
            kept: plan.is_some().then(Vec::new),
            inner: Records::new(parser),
        };
        let done = git.cmd(argv).stream(sink).await?;
        let Tee { inner, kept } = done.sink;
        if let (Some(plan), Some(output)) = (plan, kept)
            && !done.stopped_early
            && inner.error.is_none()
        {
            plan.store(git.repo, output);
        }
        Ok(inner.finish(true)?)
    }
}

/// Reads turn `core.fsmonitor` off because its value may name a program. Where the user
/// chose git's builtin daemon instead (the literal boolean, never a path), status asks
/// it as the user's own `git status` would: the later `-c` wins. Nothing is written back
/// (no optional locks), so the index keeps the token and untracked cache the user's git
/// last stored. Git has no such daemon on Linux and then reads the working tree itself.
fn with_builtin_fsmonitor(on: bool, argv: Vec<OsString>) -> Vec<OsString> {
    if !on {
        return argv;
    }
    let mut args: Vec<OsString> = vec!["-c".into(), "core.fsmonitor=true".into()];
    args.extend(argv);
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(query: StatusQuery<'_>) -> String {
        query
            .argv()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn argv_for_each_shape_in_use() {
        assert_eq!(
            shown(StatusQuery::with_branch()),
            "status --porcelain=v2 -z --branch"
        );
        assert_eq!(
            shown(StatusQuery {
                show_stash: true,
                ignore_submodules: Some(IgnoreSubmodules::None),
                untracked: Some(Untracked::Normal),
                ..StatusQuery::with_branch()
            }),
            "status --porcelain=v2 -z --branch --show-stash --ignore-submodules=none --untracked-files=normal"
        );
        assert_eq!(
            shown(StatusQuery {
                ignore_submodules: Some(IgnoreSubmodules::Dirty),
                ..StatusQuery::default()
            }),
            "status --porcelain=v2 -z --ignore-submodules=dirty"
        );
        assert_eq!(
            shown(StatusQuery {
                paths: Some(&[]),
                ..StatusQuery::default()
            }),
            "--literal-pathspecs status --porcelain=v2 -z --"
        );
    }

    #[test]
    fn the_builtin_fsmonitor_goes_before_the_command_only_when_chosen() {
        let argv = || StatusQuery::with_branch().argv();
        let shown = |a: Vec<OsString>| {
            a.iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            shown(with_builtin_fsmonitor(true, argv())),
            "-c core.fsmonitor=true status --porcelain=v2 -z --branch"
        );
        assert_eq!(shown(with_builtin_fsmonitor(false, argv())), shown(argv()));
    }

    #[test]
    fn paths_follow_the_end_of_options() {
        let paths = [
            RepoRelPath::parse("path", "-n").unwrap(),
            RepoRelPath::parse("path", ":(glob)*").unwrap(),
        ];
        assert_eq!(
            shown(StatusQuery {
                untracked: Some(Untracked::All),
                paths: Some(&paths),
                ..StatusQuery::default()
            }),
            "--literal-pathspecs status --porcelain=v2 -z --untracked-files=all -- -n :(glob)*"
        );
    }
}
