//! GitHub `CODEOWNERS` files: rules, and who owns a path.
//!
//! Grammar, one rule per line (GitHub docs, "About code owners"):
//!
//! ```text
//! line    := blank | '#' comment | pattern (SP owner)* [SP '#' comment]
//! pattern := gitignore-style glob; '\' escapes the next character (so '\ ' is a space)
//! ```
//!
//! Matching follows GitHub rather than plain gitignore where the two differ:
//!
//! - a pattern without a `/` (other than a trailing one) matches a name at any depth;
//!   a leading or inner `/` anchors it at the repository top;
//! - a trailing `/` matches directories only; a directory match covers everything inside;
//! - `*` matches within one path segment, `?` one character, `**` any number of segments;
//! - `dir/*` covers the entries directly inside `dir`, not deeper ones;
//! - the last matching rule wins, and a rule without owners leaves the path unowned;
//! - `!` negation and `[...]` classes are not supported by GitHub: such lines are skipped
//!   and reported, as GitHub reports them as errors.
//!
//! Matching is case-sensitive, as on GitHub.

/// The standard locations, in the order GitHub looks: the first that exists is used.
pub const LOCATIONS: [&str; 3] = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// 1-based line number in the file.
    pub line: usize,
    /// The pattern as written (escapes kept).
    pub pattern: String,
    pub owners: Vec<String>,
    matcher: Pattern,
}

/// A parsed file: its usable rules and the lines that were skipped as unsupported.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CodeOwners {
    pub rules: Vec<Rule>,
    /// `(line, reason)` of every line GitHub would reject.
    pub skipped: Vec<(usize, &'static str)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    anchored: bool,
    dir_only: bool,
    /// `dir/*`: matches direct entries only, never what lies below them.
    direct_only: bool,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: zero or more whole segments.
    AnyDepth,
    Glob(Vec<Token>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `*`
    Star,
    /// `?`
    One,
}

/// Parses a CODEOWNERS file. Never fails: bad lines are skipped and listed.
pub fn parse(text: &str) -> CodeOwners {
    let mut out = CodeOwners::default();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let words = split_words(raw);
        let Some((pattern, owners)) = words.split_first() else {
            continue;
        };
        if pattern.starts_with('!') {
            out.skipped.push((line, "negation ('!') is not supported"));
            continue;
        }
        if pattern.contains(['[', ']']) {
            out.skipped
                .push((line, "character classes ('[...]') are not supported"));
            continue;
        }
        match compile(pattern) {
            Some(matcher) => out.rules.push(Rule {
                line,
                pattern: pattern.clone(),
                owners: owners.to_vec(),
                matcher,
            }),
            None => out.skipped.push((line, "empty pattern")),
        }
    }
    out
}

/// Splits a line into words, honouring `\` escapes, and drops a trailing `#` comment.
fn split_words(raw: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                current.push('\\');
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            '#' if current.is_empty() => break,
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn compile(pattern: &str) -> Option<Pattern> {
    let mut body = pattern;
    let mut anchored = false;
    if let Some(rest) = body.strip_prefix('/') {
        anchored = true;
        body = rest;
    }
    let mut dir_only = false;
    if let Some(rest) = body.strip_suffix('/') {
        if !rest.ends_with('\\') {
            dir_only = true;
            body = rest;
        }
    }
    if body.is_empty() {
        // `/` alone or `*`-less nothing: GitHub treats a bare `/` as the whole tree.
        return (pattern == "/").then(|| Pattern {
            anchored: false,
            dir_only: false,
            direct_only: false,
            segments: vec![Segment::AnyDepth],
        });
    }
    let raw_segments: Vec<&str> = body.split('/').filter(|s| !s.is_empty()).collect();
    if raw_segments.len() > 1 {
        anchored = true;
    }
    let segments: Vec<Segment> = raw_segments
        .iter()
        .map(|s| {
            if *s == "**" {
                Segment::AnyDepth
            } else {
                Segment::Glob(tokens(s))
            }
        })
        .collect();
    let direct_only = raw_segments.len() > 1 && raw_segments.last() == Some(&"*");
    Some(Pattern {
        anchored,
        dir_only,
        direct_only,
        segments,
    })
}

fn tokens(segment: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = segment.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '\\' => Token::Char(chars.next().unwrap_or('\\')),
            '*' => {
                // `a**b` inside one segment means the same as `a*b`.
                if out.last() == Some(&Token::Star) {
                    continue;
                }
                Token::Star
            }
            '?' => Token::One,
            c => Token::Char(c),
        });
    }
    out
}

/// Wildcard match of one segment. Iterative, backtracking only to the last `*`, so a
/// hostile pattern (`*a*a*a*…`) costs O(pattern × text), never exponential time.
fn glob(tokens: &[Token], text: &[char]) -> bool {
    let (mut t, mut c) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while c < text.len() {
        match tokens.get(t) {
            Some(Token::Star) => {
                star = Some((t, c));
                t += 1;
            }
            Some(Token::One) => {
                t += 1;
                c += 1;
            }
            Some(Token::Char(ch)) if *ch == text[c] => {
                t += 1;
                c += 1;
            }
            _ => match star {
                Some((st, sc)) => {
                    t = st + 1;
                    c = sc + 1;
                    star = Some((st, sc + 1));
                }
                None => return false,
            },
        }
    }
    tokens[t..].iter().all(|tok| *tok == Token::Star)
}

/// Whole-path match with `**`, by dynamic programming over (pattern, path) positions so
/// many `**` segments cannot blow up.
fn segments_match(pattern: &[Segment], path: &[&str]) -> bool {
    let (p, s) = (pattern.len(), path.len());
    // ok[i][j]: pattern[i..] matches path[j..].
    let mut ok = vec![vec![false; s + 1]; p + 1];
    ok[p][s] = true;
    for i in (0..p).rev() {
        for j in (0..=s).rev() {
            ok[i][j] = match &pattern[i] {
                Segment::AnyDepth => ok[i + 1][j] || (j < s && ok[i][j + 1]),
                Segment::Glob(tokens) => {
                    j < s && ok[i + 1][j + 1] && {
                        let chars: Vec<char> = path[j].chars().collect();
                        glob(tokens, &chars)
                    }
                }
            };
        }
    }
    ok[0][0]
}

impl Pattern {
    /// Whether this pattern names exactly `path` (not counting what lies inside it).
    fn names(&self, path: &[&str], is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        if self.anchored {
            segments_match(&self.segments, path)
        } else {
            match path.last() {
                Some(name) => segments_match(&self.segments, &[name]),
                None => false,
            }
        }
    }

    /// Whether this pattern covers `path`: names it, or names a directory above it.
    fn covers(&self, path: &[&str], is_dir: bool) -> bool {
        if self.names(path, is_dir) {
            return true;
        }
        if self.direct_only {
            return false;
        }
        (1..path.len()).any(|depth| self.names(&path[..depth], true))
    }
}

impl CodeOwners {
    /// The rule that decides who owns `path` (repository-relative, `/`-separated): the
    /// last rule covering it. `is_dir` says whether `path` itself is a directory.
    pub fn owner_rule(&self, path: &str, is_dir: bool) -> Option<&Rule> {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        if segments.is_empty() {
            return None;
        }
        self.rules
            .iter()
            .rev()
            .find(|rule| rule.matcher.covers(&segments, is_dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(file: &str, path: &str, is_dir: bool) -> Option<String> {
        parse(file)
            .owner_rule(path, is_dir)
            .map(|r| format!("{} -> {}", r.pattern, r.owners.join(" ")))
    }

    /// The example file from GitHub's documentation, abridged to the rules we test.
    const GITHUB_EXAMPLE: &str = "\
# This is a comment.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
/build/logs/*.md
";

    #[test]
    fn github_documented_examples() {
        let cases = [
            ("README.md", false),
            ("src/app.js", false),
            ("main.go", false),
            ("notes/a.txt", false),
            ("build/logs/x.log", false),
            ("build/logs/deep/x.log", false),
            ("docs/getting-started.md", false),
            ("docs/build-app/troubleshooting.md", false),
            ("scripts/run.sh", false),
            ("deep/in/logs/file", false),
            ("logs", true),
            ("apps/web/index.html", false),
            ("apps/github/main.rs", false),
            ("apps/github", true),
            ("build/logs/README.md", false),
            ("src", true),
        ];
        let results: Vec<String> = cases
            .iter()
            .map(|(p, d)| format!("{p}: {:?}", owner(GITHUB_EXAMPLE, p, *d)))
            .collect();
        insta::assert_debug_snapshot!(results, @r#"
        [
            "README.md: Some(\"* -> @global-owner1 @global-owner2\")",
            "src/app.js: Some(\"*.js -> @js-owner\")",
            "main.go: Some(\"*.go -> docs@example.com\")",
            "notes/a.txt: Some(\"*.txt -> @octo-org/octocats\")",
            "build/logs/x.log: Some(\"**/logs -> @octocat\")",
            "build/logs/deep/x.log: Some(\"**/logs -> @octocat\")",
            "docs/getting-started.md: Some(\"/docs/ -> @doctocat\")",
            "docs/build-app/troubleshooting.md: Some(\"/docs/ -> @doctocat\")",
            "scripts/run.sh: Some(\"/scripts/ -> @doctocat @octocat\")",
            "deep/in/logs/file: Some(\"**/logs -> @octocat\")",
            "logs: Some(\"**/logs -> @octocat\")",
            "apps/web/index.html: Some(\"/apps/ -> @octocat\")",
            "apps/github/main.rs: Some(\"/apps/github -> \")",
            "apps/github: Some(\"/apps/github -> \")",
            "build/logs/README.md: Some(\"/build/logs/*.md -> \")",
            "src: Some(\"* -> @global-owner1 @global-owner2\")",
        ]
        "#);
    }

    #[test]
    fn anchoring_and_depth() {
        let f = "/src/ @root-src\n";
        assert_eq!(
            owner(f, "src/a.rs", false).as_deref(),
            Some("/src/ -> @root-src")
        );
        assert_eq!(owner(f, "lib/src/a.rs", false), None, "leading / anchors");
        let f = "src/ @any-src\n";
        assert!(
            owner(f, "lib/src/a.rs", false).is_some(),
            "no slash: any depth"
        );
        assert!(
            owner(f, "src", false).is_none(),
            "trailing / needs a directory"
        );
        assert!(owner(f, "src", true).is_some());
        let f = "src/util @inner\n";
        assert!(owner(f, "src/util/x.rs", false).is_some());
        assert!(
            owner(f, "lib/src/util/x.rs", false).is_none(),
            "inner / anchors"
        );
        let f = "docs/* @direct\n";
        assert!(owner(f, "docs/a.md", false).is_some());
        assert!(
            owner(f, "docs/sub/a.md", false).is_none(),
            "dir/* is one level"
        );
        assert!(owner(f, "docs/sub", true).is_some());
    }

    #[test]
    fn wildcards() {
        let f = "a/**/z.md @deep\n*.r? @rx\n/x*y/ @xy\n";
        assert!(owner(f, "a/z.md", false).unwrap().contains("@deep"));
        assert!(owner(f, "a/b/c/z.md", false).unwrap().contains("@deep"));
        assert!(owner(f, "b/a/z.md", false).is_none());
        assert!(owner(f, "src/lib.rs", false).unwrap().contains("@rx"));
        assert!(owner(f, "src/lib.rsx", false).is_none());
        assert!(owner(f, "xay/f", false).unwrap().contains("@xy"));
        assert!(owner(f, "xa/y/f", false).is_none(), "* never crosses /");
        let f = "**/build/** @b\n";
        assert!(owner(f, "x/build/out/a", false).is_some());
        let f = "/ @everyone\n";
        assert!(owner(f, "any/thing", false).is_some());
    }

    #[test]
    fn last_match_wins_and_empty_owners_unown() {
        let f = "* @all\n/src/ @src\n/src/generated/\n";
        assert_eq!(
            owner(f, "src/a.rs", false).as_deref(),
            Some("/src/ -> @src")
        );
        assert_eq!(
            owner(f, "src/generated/a.rs", false).as_deref(),
            Some("/src/generated/ -> ")
        );
        assert_eq!(owner(f, "README", false).as_deref(), Some("* -> @all"));
    }

    #[test]
    fn case_sensitive_and_escapes() {
        let f = "/Docs/ @upper\nmy\\ file.txt @space\n\\#hash @hash\n";
        assert!(owner(f, "docs/a", false).is_none());
        assert!(owner(f, "Docs/a", false).is_some());
        assert!(owner(f, "x/my file.txt", false).unwrap().contains("@space"));
        assert!(owner(f, "#hash", false).unwrap().contains("@hash"));
    }

    #[test]
    fn hostile_patterns_stay_cheap() {
        let stars = format!("{}b @x\n", "*a".repeat(40));
        let name = "a".repeat(200);
        assert!(owner(&stars, &name, false).is_none());
        let deep = format!("{}z @x\n", "**/".repeat(40));
        let path = vec!["d"; 60].join("/") + "/z";
        assert!(owner(&deep, &path, false).is_some());
        assert!(owner(&deep, &(path + "y"), false).is_none());
    }

    #[test]
    fn malformed_lines_are_skipped_and_reported() {
        let parsed =
            parse("!keep.txt @a\n*.[ch] @c\n\n   # indented comment\n*.rs @rust # trailing\n");
        assert_eq!(parsed.rules.len(), 1);
        assert_eq!(parsed.rules[0].owners, vec!["@rust".to_owned()]);
        insta::assert_debug_snapshot!(parsed.skipped, @r#"
        [
            (
                1,
                "negation ('!') is not supported",
            ),
            (
                2,
                "character classes ('[...]') are not supported",
            ),
        ]
        "#);
    }
}
