//! Ref-name globs for the agent policy.
//!
//! A pattern is a full ref name (`refs/…`) split at `/`. Within one component `*` matches
//! any run of characters (none included) but never a `/`, so `refs/heads/agent/*` allows
//! `refs/heads/agent/fix` and not `refs/heads/agent/a/b`. A component that is exactly `**`
//! matches whole components: zero or more in the middle or at the start, one or more at
//! the end (`refs/heads/agent/**` allows everything under `agent/`, not `agent` itself) —
//! the same reading as gitignore. Nothing else is special; `?`, `[`, `\` and the other
//! characters git forbids in ref names are refused when the policy is loaded, so a
//! pattern can never be read two ways.

/// One compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefGlob {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// `**`: whole components.
    Any,
    /// One component; `*` within it is a wildcard.
    Component(String),
}

impl RefGlob {
    /// Compiles `pattern`, or says what is wrong with it.
    pub fn parse(pattern: &str) -> Result<RefGlob, String> {
        if !pattern.starts_with("refs/") {
            return Err("a ref pattern is a full ref name starting with refs/".into());
        }
        if let Some(c) = pattern
            .chars()
            .find(|c| c.is_control() || c.is_whitespace() || "?[\\~^:".contains(*c))
        {
            return Err(format!("{c:?} is not allowed in a ref pattern"));
        }
        if pattern.contains("..") || pattern.contains("@{") {
            return Err("`..` and `@{` cannot appear in a ref name".into());
        }
        let mut parts = Vec::new();
        for component in pattern.split('/') {
            if component.is_empty() {
                return Err("empty path component (`//` or a trailing `/`)".into());
            }
            if component == "**" {
                if parts.last() != Some(&Part::Any) {
                    parts.push(Part::Any);
                }
            } else if component.contains("**") {
                return Err("`**` must be a whole path component".into());
            } else {
                parts.push(Part::Component(component.to_owned()));
            }
        }
        Ok(RefGlob {
            text: pattern.to_owned(),
            parts,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when the full ref name `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        let components: Vec<&str> = name.split('/').collect();
        if components.iter().any(|c| c.is_empty()) {
            return false;
        }
        match_parts(&self.parts, &components)
    }
}

fn match_parts(parts: &[Part], names: &[&str]) -> bool {
    match parts.split_first() {
        None => names.is_empty(),
        // A trailing `**` needs at least one component, so `agent/**` is not `agent`.
        Some((Part::Any, [])) => !names.is_empty(),
        Some((Part::Any, rest)) => (0..=names.len()).any(|skip| {
            names
                .get(skip..)
                .is_some_and(|tail| match_parts(rest, tail))
        }),
        Some((Part::Component(pattern), rest)) => match names.split_first() {
            Some((name, tail)) => match_component(pattern, name) && match_parts(rest, tail),
            None => false,
        },
    }
}

/// `*`-only wildcard match of one component, iterative with one backtrack point.
fn match_component(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if n.get(ni) == Some(&c) => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == b'*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, name: &str) -> bool {
        RefGlob::parse(pattern).unwrap().matches(name)
    }

    #[test]
    fn star_stays_within_one_component() {
        assert!(m("refs/heads/agent/*", "refs/heads/agent/fix"));
        assert!(!m("refs/heads/agent/*", "refs/heads/agent/a/b"));
        assert!(!m("refs/heads/agent/*", "refs/heads/agent"));
        assert!(!m("refs/heads/agent/*", "refs/heads/agentx/fix"));
        assert!(m("refs/heads/agent-*", "refs/heads/agent-1"));
        assert!(!m("refs/heads/agent-*", "refs/heads/agent/1"));
        assert!(m("refs/heads/*-wip", "refs/heads/x-wip"));
        assert!(m("refs/heads/a*b*c", "refs/heads/aXbYbZc"));
        assert!(!m("refs/heads/a*b*c", "refs/heads/aXbYbZ"));
        assert!(m("refs/heads/main", "refs/heads/main"));
        assert!(!m("refs/heads/main", "refs/heads/main2"));
    }

    #[test]
    fn double_star_takes_whole_components() {
        assert!(m("refs/heads/agent/**", "refs/heads/agent/a"));
        assert!(m("refs/heads/agent/**", "refs/heads/agent/a/b/c"));
        assert!(!m("refs/heads/agent/**", "refs/heads/agent"));
        assert!(m("refs/**/wip", "refs/wip"));
        assert!(m("refs/**/wip", "refs/heads/x/wip"));
        assert!(!m("refs/**/wip", "refs/heads/x/wip2"));
        assert!(m("refs/heads/**/fix-*", "refs/heads/fix-1"));
        assert!(m("refs/heads/**/**/x", "refs/heads/x"));
    }

    #[test]
    fn malformed_names_never_match() {
        assert!(!m("refs/heads/**", "refs/heads//x"));
        assert!(!m("refs/heads/*", "refs/heads/"));
    }

    #[test]
    fn ambiguous_or_impossible_patterns_are_refused() {
        for bad in [
            "heads/main",
            "main",
            "refs/heads/ma?n",
            "refs/heads/[ab]",
            "refs/heads/a\\b",
            "refs/heads/a**",
            "refs/heads//x",
            "refs/heads/x/",
            "refs/heads/a..b",
            "refs/heads/a b",
            "refs/heads/a:b",
            "refs/heads/x@{1}",
        ] {
            assert!(RefGlob::parse(bad).is_err(), "{bad}");
        }
    }
}
