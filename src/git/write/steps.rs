//! The history-rewriting, patch and network steps of the operation vocabulary: `rebase`,
//! `apply` and `push`.
//!
//! `rebase` and `apply` keep the write policy of the parent module. `push` is the one
//! write allowed to reach the network, so it drops exactly two of those settings — the
//! emptied credential helper and `protocol.allow=never` — and the user's own transport
//! and credential configuration applies, as on a manual push. Prompts stay off
//! (`GIT_TERMINAL_PROMPT=0` from the process door): a credential that would need typing
//! makes the push fail instead of waiting. Transport and credential programs the
//! repository's own configuration names never run: see [`super::transport`].

use std::ffi::OsString;

use super::{GitWrite, OUTPUT_CAP, Ran, STOP_GRACE, WRITE_OVERRIDES};
use crate::process::{HeadTail, Invocation, Program, RunError};

/// The write settings minus those that would keep a push off the network (the protocol
/// pins come from [`super::transport`] instead, with the user's own values).
fn push_overrides() -> Vec<&'static str> {
    let mut out = Vec::new();
    for pair in WRITE_OVERRIDES.chunks(2) {
        let keep = !matches!(
            pair[1],
            "credential.helper="
                | "protocol.allow=never"
                | "protocol.ext.allow=never"
                | "protocol.fd.allow=never"
        );
        if keep {
            out.extend_from_slice(pair);
        }
    }
    out
}

/// One push: `git push [-u] [--force-with-lease=<ref>:<expected>] <remote> <src>:<dst>`.
#[derive(Debug, Clone, Copy)]
pub struct PushStep<'a> {
    pub remote: &'a str,
    /// What is pushed: a commit id.
    pub source: &'a str,
    /// The full remote ref it updates (`refs/heads/x`).
    pub destination: &'a str,
    /// `Some(oid)`: replace the remote ref only while it still points at `oid` (empty for
    /// "must not exist"); `None`: a fast-forward only.
    pub lease: Option<&'a str>,
    pub set_upstream: bool,
}

impl PushStep<'_> {
    pub fn argv(&self) -> Vec<String> {
        let mut argv = vec!["push".to_owned(), "--porcelain".to_owned()];
        if self.set_upstream {
            argv.push("--set-upstream".into());
        }
        if let Some(expected) = self.lease {
            argv.push(format!(
                "--force-with-lease={}:{expected}",
                self.destination
            ));
        }
        argv.extend([
            "--end-of-options".to_owned(),
            self.remote.to_owned(),
            format!("{}:{}", self.source, self.destination),
        ]);
        argv
    }
}

impl GitWrite<'_> {
    async fn run_with(
        &self,
        overrides: &[&str],
        args: Vec<String>,
        stdin: Option<Vec<u8>>,
    ) -> Result<Ran, RunError> {
        self.run_configured(overrides, args, stdin, &[]).await
    }

    /// [`Self::run_with`] with `config` set for this one run (command scope).
    async fn run_configured(
        &self,
        overrides: &[&str],
        args: Vec<String>,
        stdin: Option<Vec<u8>>,
        config: &[(OsString, OsString)],
    ) -> Result<Ran, RunError> {
        let command = std::iter::once("git".to_owned())
            .chain(args.iter().cloned())
            .collect();
        let mut inv = Invocation::new(Program::Git)
            .dir(self.dir)
            .timeout(self.timeout)
            .terminate_first(STOP_GRACE)
            .args(overrides.iter().copied())
            .args(args.into_iter().map(OsString::from))
            .git_config(config);
        if let Some(bytes) = stdin {
            inv = inv.stdin(bytes);
        }
        let done = inv.stream(HeadTail::new(OUTPUT_CAP), self.cancel).await?;
        Ok(Ran {
            command,
            cwd: self.dir.to_owned(),
            code: done.code,
            stdout: String::from_utf8_lossy(&done.sink.text())
                .trim_end()
                .to_owned(),
            stderr: done.stderr_text(),
        })
    }

    /// A non-interactive `git rebase` of the checked-out branch (or of `branch`, which git
    /// checks out first) onto `onto` (a commit id or a validated revision). No autostash (a dirty tree refuses), no
    /// autosquash, and no other branch moved along (`--no-update-refs`): exactly the refs
    /// the proposal names change.
    pub async fn rebase_onto(&self, onto: &str, branch: Option<&str>) -> Result<Ran, RunError> {
        let mut argv: Vec<String> = [
            "rebase",
            "--no-autostash",
            "--no-autosquash",
            "--no-update-refs",
            "--end-of-options",
            onto,
        ]
        .map(str::to_owned)
        .to_vec();
        argv.extend(branch.map(str::to_owned));
        self.run_with(WRITE_OVERRIDES, argv, None).await
    }

    /// `git rebase --abort`: back to the branch and tree from before the rebase.
    pub async fn rebase_abort(&self) -> Result<Ran, RunError> {
        self.run_with(
            WRITE_OVERRIDES,
            vec!["rebase".into(), "--abort".into()],
            None,
        )
        .await
    }

    /// `git apply` of `patch` (read from stdin) to the worktree, or with `index` to the
    /// worktree and the index together (`--index`); with `check` nothing is applied.
    ///
    /// `--index` compares each touched file with its index entry by stat data alone, so a
    /// file whose stat data went stale (touched, or checked out in the same second) reads
    /// as "does not match index" although its bytes match. The index is first refreshed
    /// as `git status` refreshes it (`update-index -q --unmerged --refresh`: stat data
    /// brought up to date, nothing staged); a refresh git refuses is the outcome.
    pub async fn apply(&self, patch: Vec<u8>, index: bool, check: bool) -> Result<Ran, RunError> {
        if index && !check {
            let refresh = ["update-index", "-q", "--unmerged", "--refresh"];
            let refreshed = self
                .run_with(WRITE_OVERRIDES, refresh.map(str::to_owned).to_vec(), None)
                .await?;
            if !refreshed.ok() {
                return Ok(refreshed);
            }
        }
        let mut argv = vec!["apply".to_owned()];
        if check {
            argv.push("--check".into());
        }
        if index {
            argv.push("--index".into());
        }
        argv.push("-".into());
        self.run_with(WRITE_OVERRIDES, argv, Some(patch)).await
    }

    /// Runs one push, on the network, with the user's own credential helpers and
    /// transport programs: those the repository names are set back ([`super::transport`]).
    pub async fn push(&self, step: PushStep<'_>) -> Result<Ran, RunError> {
        let overrides = push_overrides();
        let pinned = super::transport::read(self.dir, step.remote, self.cancel).await?;
        let mut argv = step.argv();
        // Before `--end-of-options`, right after `push --porcelain`.
        argv.insert(2, format!("--receive-pack={}", pinned.receive_pack));
        self.run_configured(&overrides, argv, None, &pinned.config)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_keeps_every_setting_but_the_network_pair_and_never_forces_bare() {
        let kept = push_overrides();
        assert!(kept.contains(&"core.fsmonitor=false"));
        assert!(!kept.contains(&"credential.helper="));
        assert!(!kept.contains(&"protocol.allow=never"));
        assert_eq!(kept.len() + 8, WRITE_OVERRIDES.len());
        let step = PushStep {
            remote: "origin",
            source: "abc",
            destination: "refs/heads/main",
            lease: Some("def"),
            set_upstream: true,
        };
        assert_eq!(
            step.argv(),
            [
                "push",
                "--porcelain",
                "--set-upstream",
                "--force-with-lease=refs/heads/main:def",
                "--end-of-options",
                "origin",
                "abc:refs/heads/main"
            ]
        );
        let argv = PushStep {
            lease: None,
            ..step
        }
        .argv();
        assert!(!argv.iter().any(|a| a.starts_with("--force")));
    }
}
