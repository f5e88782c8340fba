//! Where a bisect stands: the commit marked bad, those marked good, under the terms the
//! bisect was started with (`git bisect start --term-new=… --term-old=…`).

use super::{Git, GitError, Oid, refs};

/// Term files hold two short words.
const TERMS_CAP: u64 = 4096;

/// The marks of an in-progress bisect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    /// The commit marked with the bad (new) term.
    pub bad: Option<Oid>,
    /// The commits marked with the good (old) term, in ref name order.
    pub good: Vec<Oid>,
    /// The two terms, bad first, when they are not `bad`/`good`.
    pub terms: Option<(String, String)>,
}

/// The marks git keeps under `refs/bisect/` of this worktree (they are per worktree).
pub async fn marks(git: &Git<'_>) -> Result<Marks, GitError> {
    let git_dir = git.repo.git_dir.clone();
    let terms = crate::safe_file::off_thread(git.cancel(), move || {
        crate::safe_file::read_prefix_in(&git_dir, "BISECT_TERMS", TERMS_CAP).ok()
    })
    .await?
    .and_then(|bytes| terms(&bytes));
    let (bad_term, good_term) = terms
        .clone()
        .unwrap_or_else(|| ("bad".to_owned(), "good".to_owned()));
    let refs = refs::resolve(git, &["refs/bisect/".to_owned()]).await?;
    let bad_ref = format!("refs/bisect/{bad_term}");
    let good_prefix = format!("refs/bisect/{good_term}-");
    let mut out = Marks {
        terms: terms.filter(|(b, g)| (b.as_str(), g.as_str()) != ("bad", "good")),
        ..Marks::default()
    };
    for (name, oid) in refs {
        if name == bad_ref {
            out.bad = Some(oid);
        } else if name.starts_with(&good_prefix) {
            out.good.push(oid);
        }
    }
    Ok(out)
}

/// `BISECT_TERMS`: the bad term on the first line, the good one on the second.
fn terms(bytes: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines().map(str::trim);
    let (bad, good) = (lines.next()?, lines.next()?);
    (!bad.is_empty() && !good.is_empty()).then(|| (bad.to_owned(), good.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::terms;

    #[test]
    fn terms_file() {
        assert_eq!(
            terms(b"new\nold\n"),
            Some(("new".to_owned(), "old".to_owned()))
        );
        assert_eq!(terms(b"bad\n"), None);
        assert_eq!(terms(b"\xff\nx\n"), None);
    }
}
