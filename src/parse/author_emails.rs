//! `git log -z --format=@%ae`: how many commits, and how many distinct author emails.
//!
//! Grammar, one record per commit, NUL between commits (`-z`):
//!
//! ```text
//! commit := "@" email
//! ```
//!
//! The `@` keeps a commit with an empty email from reading as no commit. Emails are
//! compared case-insensitively. Counting stops at a cap; the count is then a lower bound.

use std::collections::HashSet;

use crate::process::{Flow, Sink};

/// The `--format=` argument this counter reads.
pub const FORMAT: &str = "--format=@%ae";

#[derive(Debug, Default)]
pub struct AuthorEmails {
    pub commits: u64,
    emails: HashSet<String>,
    pending: Vec<u8>,
    cap: u64,
    /// True when counting stopped at the cap.
    pub stopped: bool,
}

impl AuthorEmails {
    pub fn new(cap: u64) -> Self {
        AuthorEmails {
            cap,
            ..AuthorEmails::default()
        }
    }

    fn take(&mut self) {
        if let Some(email) = self.pending.strip_prefix(b"@") {
            self.commits += 1;
            self.emails
                .insert(String::from_utf8_lossy(email).to_lowercase());
        }
        self.pending.clear();
    }

    /// Ends the stream: the last commit has no NUL after it.
    pub fn finish(mut self) -> Self {
        if !self.stopped {
            self.take();
        }
        self
    }

    pub fn distinct(&self) -> u64 {
        self.emails.len() as u64
    }
}

impl Sink for AuthorEmails {
    fn accept(&mut self, chunk: &[u8]) -> Flow {
        for b in chunk {
            if *b != 0 {
                self.pending.push(*b);
                continue;
            }
            self.take();
            if self.commits >= self.cap {
                self.stopped = true;
                return Flow::Enough;
            }
        }
        Flow::More
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_commits_and_distinct_emails() {
        let mut c = AuthorEmails::new(100);
        assert_eq!(c.accept(b"@a@x\0@A@X\0@"), Flow::More);
        assert_eq!(c.accept(b"\0@b@y"), Flow::More);
        let c = c.finish();
        assert_eq!((c.commits, c.distinct(), c.stopped), (4, 3, false));
    }

    #[test]
    fn stops_at_the_cap() {
        let mut c = AuthorEmails::new(2);
        assert_eq!(c.accept(b"@a\0@b\0@c\0"), Flow::Enough);
        let c = c.finish();
        assert_eq!((c.commits, c.stopped), (2, true));
    }
}
