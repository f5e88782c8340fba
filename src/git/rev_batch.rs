//! Several revisions answered by one `git rev-parse`: commits named by the user, trees of
//! known commits, and the merge bases of two commits — what a proposal of several steps
//! pins, in one process instead of one per question.
//!
//! Without `--verify`, `rev-parse` also reads range syntax (`a..b`, `a...b`, a leading
//! `^`), so a name is asked here only when it has none of it (see [`batchable`]); the
//! caller resolves any other name one by one. Every argument sits after
//! `--end-of-options` and before `--`, so none is read as an option or a path. A name git
//! cannot resolve fails the whole run: the answer is then `None`, and the caller asks
//! each question on its own to learn which name was wrong.

use super::{Git, GitError, Oid, Rev};

/// One question of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// The commit a name resolves to (`<name>^{commit}`).
    Commit(Rev),
    /// The tree of a commit (`<oid>^{tree}`).
    Tree(Oid),
    /// The merge bases of a commit and a named commit (`<oid>...<name>^{commit}`): every
    /// best common ancestor, none when the histories share no commit.
    Bases(Oid, Rev),
}

/// The answer to one [`Ask`], in the same order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Oid(Oid),
    Bases(Vec<Oid>),
}

/// Whether `rev` can be asked in a batch: read by `rev-parse` as one revision, never a
/// range or a negation.
pub fn batchable(rev: &Rev) -> bool {
    !rev.as_str().contains("..") && !rev.as_str().starts_with('^')
}

impl Ask {
    fn arg(&self) -> String {
        match self {
            Ask::Commit(rev) => format!("{}^{{commit}}", rev.as_str()),
            Ask::Tree(oid) => format!("{oid}^{{tree}}"),
            Ask::Bases(a, b) => format!("{a}...{}^{{commit}}", b.as_str()),
        }
    }

    fn batchable(&self) -> bool {
        match self {
            Ask::Commit(rev) | Ask::Bases(_, rev) => batchable(rev),
            Ask::Tree(_) => true,
        }
    }
}

/// Answers every ask with one `rev-parse`; `None` when git refused one of them (or a name
/// cannot be batched). An empty list runs nothing.
pub async fn resolve(git: &Git<'_>, asks: &[Ask]) -> Result<Option<Vec<Answer>>, GitError> {
    if asks.is_empty() {
        return Ok(Some(Vec::new()));
    }
    if !asks.iter().all(Ask::batchable) {
        return Ok(None);
    }
    let out = git
        .cmd(["rev-parse", "--end-of-options"])
        .args(asks.iter().map(Ask::arg))
        .arg("--")
        .capture_allowing(64 * 1024, &[0, 128])
        .await?;
    if !out.success() {
        return Ok(None);
    }
    Ok(parse(asks, &out.sink.bytes))
}

/// The answers in `rev-parse`'s output: one object id per commit or tree; for merge
/// bases both sides then one `^<oid>` line per base. `None` when the output is not that.
fn parse(asks: &[Ask], out: &[u8]) -> Option<Vec<Answer>> {
    let text = std::str::from_utf8(out).ok()?;
    let mut lines = text
        .lines()
        .filter(|l| *l != "--end-of-options" && *l != "--")
        .peekable();
    let mut answers = Vec::with_capacity(asks.len());
    for ask in asks {
        match ask {
            Ask::Commit(_) | Ask::Tree(_) => answers.push(Answer::Oid(Oid::parse(lines.next()?)?)),
            Ask::Bases(..) => {
                for _ in 0..2 {
                    Oid::parse(lines.next()?)?;
                }
                let mut bases = Vec::new();
                while let Some(base) = lines.next_if(|l| l.starts_with('^')) {
                    bases.push(Oid::parse(&base[1..])?);
                }
                answers.push(Answer::Bases(bases));
            }
        }
    }
    lines.next().is_none().then_some(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(c: char) -> Oid {
        Oid::parse(&c.to_string().repeat(40)).unwrap()
    }

    fn rev(s: &str) -> Rev {
        Rev::parse("rev", s).unwrap()
    }

    #[test]
    fn ranges_and_negations_are_never_batched() {
        for ok in ["main", "HEAD~1", "v1^{tag}", ":/fix it", "a.b"] {
            assert!(batchable(&rev(ok)), "{ok}");
        }
        for no in ["a..b", "a...b", "^main", "x..", "..y"] {
            assert!(!batchable(&rev(no)), "{no}");
        }
        assert_eq!(
            Ask::Bases(oid('a'), rev("f")).arg(),
            format!("{}...f^{{commit}}", oid('a'))
        );
    }

    #[test]
    fn output_is_split_per_ask() {
        let asks = [
            Ask::Commit(rev("HEAD~1")),
            Ask::Bases(oid('a'), rev("f")),
            Ask::Tree(oid('a')),
            Ask::Bases(oid('a'), rev("g")),
        ];
        let out = format!(
            "--end-of-options\n{c}\n{b}\n{a}\n^{c}\n^{d}\n{e}\n{g}\n{a}\n--\n",
            a = oid('a'),
            b = oid('b'),
            c = oid('c'),
            d = oid('d'),
            e = oid('e'),
            g = oid('9'),
        );
        assert_eq!(
            parse(&asks, out.as_bytes()).unwrap(),
            [
                Answer::Oid(oid('c')),
                Answer::Bases(vec![oid('c'), oid('d')]),
                Answer::Oid(oid('e')),
                Answer::Bases(vec![]),
            ]
        );
        // Short or extra output is not trusted.
        assert!(parse(&asks[..1], b"").is_none());
        let extra = format!("{}\n{}\n", oid('a'), oid('b'));
        assert!(parse(&asks[..1], extra.as_bytes()).is_none());
    }
}
