//! `git for-each-ref`: every question about which refs exist and where they point.
//!
//! Each query asks for a fixed list of fields, reads them through the one
//! for-each-ref parser (`crate::parse::for_each_ref`) and hands back typed rows. Patterns
//! are full ref names or prefixes under `refs/`, so none can be read as an option.

use std::ffi::OsString;

use super::{Git, GitError, Oid};
use crate::parse::for_each_ref::{self, ForEachRef, Rows, Track};
use crate::parse::{ParseError, Records};
use crate::process::Flow;

/// One for-each-ref run: which fields, in which order, how many refs, under which
/// patterns.
struct RefQuery<'a> {
    fields: &'a [String],
    sort: Option<&'a str>,
    count: Option<usize>,
    /// Only refs whose every commit HEAD contains (`--merged=HEAD`).
    merged_into_head: bool,
    patterns: &'a [String],
}

impl RefQuery<'_> {
    fn argv(&self) -> Result<Vec<OsString>, GitError> {
        if let Some(bad) = self.patterns.iter().find(|p| !p.starts_with("refs/")) {
            return Err(GitError::internal(format!(
                "ref pattern outside refs/: {bad:?}"
            )));
        }
        let fields: Vec<&str> = self.fields.iter().map(String::as_str).collect();
        let mut args: Vec<OsString> =
            vec!["for-each-ref".into(), for_each_ref::format(&fields).into()];
        if let Some(sort) = self.sort {
            args.push(format!("--sort={sort}").into());
        }
        if let Some(count) = self.count {
            args.push(format!("--count={count}").into());
        }
        if self.merged_into_head {
            args.push("--merged=HEAD".into());
        }
        args.extend(self.patterns.iter().map(OsString::from));
        Ok(args)
    }

    async fn run<R: Rows>(&self, git: &Git<'_>, rows: R) -> Result<R, GitError> {
        let done = git
            .cmd(self.argv()?)
            .stream(Records::new(ForEachRef::new(self.fields.len(), rows)))
            .await?;
        Ok(done.sink.finish(true)?.rows)
    }
}

fn fields(list: &[&str]) -> Vec<String> {
    list.iter().map(|f| (*f).to_owned()).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The bytes themselves when [`text`] cannot show them exactly.
fn raw_if_lossy(bytes: &[u8]) -> Option<Vec<u8>> {
    std::str::from_utf8(bytes).is_err().then(|| bytes.to_vec())
}

fn oid(bytes: &[u8], offset: usize) -> Result<Oid, ParseError> {
    Oid::from_bytes(bytes).ok_or_else(|| ParseError::new(offset, "bad object id"))
}

/// Keeps every row, converted.
struct Collecting<T, F> {
    list: Vec<T>,
    convert: F,
}

impl<T, F> Rows for Collecting<T, F>
where
    T: Send + 'static,
    F: FnMut(&[Vec<u8>], usize) -> Result<T, ParseError> + Send + 'static,
{
    fn row(&mut self, fields: Vec<Vec<u8>>, offset: usize) -> Result<Flow, ParseError> {
        self.list.push((self.convert)(&fields, offset)?);
        Ok(Flow::More)
    }
}

async fn collect<T, F>(git: &Git<'_>, query: RefQuery<'_>, convert: F) -> Result<Vec<T>, GitError>
where
    T: Send + 'static,
    F: FnMut(&[Vec<u8>], usize) -> Result<T, ParseError> + Send + 'static,
{
    let rows = Collecting {
        list: Vec::new(),
        convert,
    };
    Ok(query.run(git, rows).await?.list)
}

/// Every ref of the repository as `repo.refs` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefRecord {
    /// The full name (`refs/heads/main`), shown lossily if not UTF-8.
    pub name: String,
    /// The exact bytes of the name, kept only when they are not UTF-8.
    pub name_bytes: Option<Vec<u8>>,
    pub oid: Oid,
    /// `commit`, `tag`, `tree` or `blob`: what the ref itself points at.
    pub object_type: String,
    /// For an annotated tag: the object it finally points to.
    pub peeled: Option<Oid>,
    /// The configured upstream (`origin/main`).
    pub upstream: Option<String>,
    /// `None` when git printed tracking text we do not know.
    pub track: Option<Track>,
    /// For a symbolic ref: the ref it points at.
    pub symref: Option<String>,
}

/// Receives the refs of [`each_ref`] one at a time, so a caller can count all of them
/// while keeping only a few.
pub trait RefSink: Send + 'static {
    fn visit(&mut self, record: RefRecord);
}

struct RecordRows<S>(S);

impl<S: RefSink> Rows for RecordRows<S> {
    fn row(&mut self, f: Vec<Vec<u8>>, offset: usize) -> Result<Flow, ParseError> {
        let peeled = if f[3].is_empty() {
            None
        } else {
            Some(oid(&f[3], offset)?)
        };
        self.0.visit(RefRecord {
            name: text(&f[0]),
            name_bytes: raw_if_lossy(&f[0]),
            oid: oid(&f[1], offset)?,
            object_type: text(&f[2]),
            peeled,
            upstream: (!f[4].is_empty()).then(|| text(&f[4])),
            track: for_each_ref::track(&f[5]),
            symref: (!f[6].is_empty()).then(|| text(&f[6])),
        });
        Ok(Flow::More)
    }
}

/// Every ref, in git's order, with what is known about it; one git run covers branches
/// (tracking counts), tags (peeled target) and symbolic refs (their target).
pub async fn each_ref<S: RefSink>(git: &Git<'_>, sink: S) -> Result<S, GitError> {
    let query = RefQuery {
        fields: &fields(&[
            "%(refname)",
            "%(objectname)",
            "%(objecttype)",
            "%(*objectname)",
            "%(upstream:short)",
            "%(upstream:track,nobracket)",
            "%(symref)",
        ]),
        sort: None,
        count: None,
        merged_into_head: false,
        patterns: &[],
    };
    Ok(query.run(git, RecordRows(sink)).await?.0)
}

/// The refs among `names` (full names under `refs/`) that exist, in git's order.
pub async fn existing(git: &Git<'_>, names: &[String]) -> Result<Vec<String>, GitError> {
    named(git, names, false).await
}

/// The refs matching `patterns` with the object each points at.
pub async fn resolve(git: &Git<'_>, patterns: &[String]) -> Result<Vec<(String, Oid)>, GitError> {
    if patterns.is_empty() {
        return Ok(Vec::new());
    }
    let query = RefQuery {
        fields: &fields(&["%(refname)", "%(objectname)"]),
        sort: None,
        count: None,
        merged_into_head: false,
        patterns,
    };
    collect(git, query, |f, at| Ok((text(&f[0]), oid(&f[1], at)?))).await
}

/// The refs matching `patterns` (at most `count`) with their symbolic target, if any.
pub async fn with_targets(
    git: &Git<'_>,
    patterns: &[String],
    count: Option<usize>,
) -> Result<Vec<(String, Option<String>)>, GitError> {
    let query = RefQuery {
        fields: &fields(&["%(refname)", "%(symref)"]),
        sort: None,
        count,
        merged_into_head: false,
        patterns,
    };
    collect(git, query, |f, _| {
        Ok((text(&f[0]), (!f[1].is_empty()).then(|| text(&f[1]))))
    })
    .await
}

/// Each of the refs `names` (full names) that has an upstream configured, with the
/// upstream's full name and how the ref relates to it (`None`: text git printed that the
/// parser does not know).
pub async fn upstream_tracks(
    git: &Git<'_>,
    names: &[String],
) -> Result<Vec<(String, String, Option<Track>)>, GitError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let query = RefQuery {
        fields: &fields(&["%(refname)", "%(upstream)", "%(upstream:track,nobracket)"]),
        sort: None,
        count: None,
        merged_into_head: false,
        patterns: names,
    };
    let rows = collect(git, query, |f, _| {
        Ok((text(&f[0]), text(&f[1]), for_each_ref::track(&f[2])))
    })
    .await?;
    Ok(rows
        .into_iter()
        .filter(|(n, u, _)| names.contains(n) && u.starts_with("refs/"))
        .collect())
}

/// The refs among `names` (full names) every commit of which HEAD contains; HEAD must be
/// born.
pub async fn merged_into_head(git: &Git<'_>, names: &[String]) -> Result<Vec<String>, GitError> {
    named(git, names, true).await
}

/// The refs among `names` that exist (and, with `merged_into_head`, that HEAD contains).
/// git matches a pattern as a prefix of whole components, so what it lists is kept only
/// when it is one of the names asked for.
async fn named(
    git: &Git<'_>,
    names: &[String],
    merged_into_head: bool,
) -> Result<Vec<String>, GitError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let query = RefQuery {
        fields: &fields(&["%(refname)"]),
        sort: None,
        count: None,
        merged_into_head,
        patterns: names,
    };
    let rows = collect(git, query, |f, _| Ok(text(&f[0]))).await?;
    Ok(rows.into_iter().filter(|n| names.contains(n)).collect())
}

/// A local branch with its upstream and, when asked, its distance from two commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchLine {
    /// Shown lossily if not UTF-8; `ref_bytes` then keeps the name.
    pub ref_name: String,
    pub ref_bytes: Option<Vec<u8>>,
    pub oid: Oid,
    /// The configured upstream, as a full ref name.
    pub upstream: Option<String>,
    /// Commits ahead of and behind the upstream, or gone.
    pub track: Track,
    /// Against `vs_head` of [`branches`]: (commits only on this branch, commits only there).
    pub vs_head: Option<(u64, u64)>,
    /// Against `vs_base` of [`branches`].
    pub vs_base: Option<(u64, u64)>,
}

/// `%(ahead-behind:…)` text: `<ahead> <behind>`.
fn pair(bytes: &[u8]) -> Option<(u64, u64)> {
    let (a, b) = std::str::from_utf8(bytes).ok()?.split_once(' ')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The newest `count` local branches, most recently committed first, each with its
/// upstream and, when the commits are given, ahead/behind against them computed in the
/// same walk (`%(ahead-behind:…)`, git 2.41 and later).
pub async fn branches(
    git: &Git<'_>,
    count: usize,
    vs_head: Option<&Oid>,
    vs_base: Option<&Oid>,
) -> Result<Vec<BranchLine>, GitError> {
    let mut list = vec![
        "%(refname)".to_owned(),
        "%(objectname)".to_owned(),
        "%(upstream)".to_owned(),
        "%(upstream:track,nobracket)".to_owned(),
    ];
    let (with_head, with_base) = (vs_head.is_some(), vs_base.is_some());
    list.extend(vs_head.map(|h| format!("%(ahead-behind:{h})")));
    list.extend(vs_base.map(|b| format!("%(ahead-behind:{b})")));
    let query = RefQuery {
        fields: &list,
        sort: Some("-committerdate"),
        count: Some(count),
        merged_into_head: false,
        patterns: &["refs/heads/".to_owned()],
    };
    collect(git, query, move |f, at| {
        branch_line(f, at, with_head, with_base)
    })
    .await
}

fn branch_line(
    f: &[Vec<u8>],
    at: usize,
    with_head: bool,
    with_base: bool,
) -> Result<BranchLine, ParseError> {
    let bad = |what: &str| ParseError::new(at, format!("bad {what}"));
    let mut rest = f[4..].iter();
    let mut counts = |wanted: bool| -> Result<Option<(u64, u64)>, ParseError> {
        if !wanted {
            return Ok(None);
        }
        let field = rest.next().ok_or_else(|| bad("ahead-behind field"))?;
        pair(field)
            .map(Some)
            .ok_or_else(|| bad("ahead-behind counts"))
    };
    let vs_head = counts(with_head)?;
    let vs_base = counts(with_base)?;
    Ok(BranchLine {
        ref_name: text(&f[0]),
        ref_bytes: raw_if_lossy(&f[0]),
        oid: oid(&f[1], at)?,
        upstream: (!f[2].is_empty()).then(|| text(&f[2])),
        // Unknown tracking text reads as in sync, never as an error.
        track: for_each_ref::track(&f[3]).unwrap_or(Track::Counts(0, 0)),
        vs_head,
        vs_base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(q: &RefQuery<'_>) -> String {
        q.argv()
            .unwrap()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn argv_keeps_patterns_under_refs() {
        let f = fields(&["%(refname)", "%(objectname)"]);
        let q = RefQuery {
            fields: &f,
            sort: Some("-committerdate"),
            count: Some(5),
            merged_into_head: false,
            patterns: &["refs/heads/".to_owned()],
        };
        assert_eq!(
            shown(&q),
            "for-each-ref --format=%(refname)%00%(objectname)%00 --sort=-committerdate --count=5 refs/heads/"
        );
        let bad = ["--all".to_owned()];
        let q = RefQuery {
            patterns: &bad,
            ..q
        };
        assert!(q.argv().is_err());
    }

    /// Captured from `for-each-ref` with both `%(ahead-behind:…)` atoms (git 2.47).
    const BRANCHES: &[u8] = b"refs/heads/feat/a\x005ce3d0130b768a35612b525329786c651c13fbfb\0refs/heads/main\0ahead 1\x001 0\x001 0\0\n\
refs/heads/main\x006a4e5328780da6f0da64e1caa079505a3f2069c4\0\0\x000 1\x000 0\0\n";

    fn lines(
        bytes: &[u8],
        with_head: bool,
        with_base: bool,
    ) -> Result<Vec<BranchLine>, ParseError> {
        let width = 4 + usize::from(with_head) + usize::from(with_base);
        let rows = Collecting {
            list: Vec::new(),
            convert: move |f: &[Vec<u8>], at| branch_line(f, at, with_head, with_base),
        };
        Ok(Records::parse_all(ForEachRef::new(width, rows), bytes)?
            .rows
            .list)
    }

    #[test]
    fn branch_lines() {
        let parsed = lines(BRANCHES, true, true).unwrap();
        let shown: Vec<String> = parsed
            .iter()
            .map(|l| {
                format!(
                    "{} {} {:?} {:?} {:?} {:?}",
                    l.ref_name,
                    l.oid.short(),
                    l.upstream,
                    l.track,
                    l.vs_head,
                    l.vs_base
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                "refs/heads/feat/a 5ce3d01 Some(\"refs/heads/main\") Counts(1, 0) Some((1, 0)) Some((1, 0))",
                "refs/heads/main 6a4e532 None Counts(0, 0) Some((0, 1)) Some((0, 0))",
            ]
        );
        assert!(lines(BRANCHES, true, false).is_err());
        assert!(lines(b"refs/heads/x\0nothex\0\0\0\n", false, false).is_err());
        let counts = b"refs/heads/x\x005ce3d0130b768a35612b525329786c651c13fbfb\0\0\0one two\0\n";
        assert!(lines(counts, true, false).is_err());
    }
}
