//! The invariant over a generated history: 40 commits of seeded edits (new functions,
//! changed bodies, removed functions, functions moved to the top, a line that breaks the
//! syntax and its repair) to one file per default language. For every commit, every file
//! that did not fall back represents git's changed lines exactly once, byte for byte; a
//! file broken on either side always falls back with a parse error; a clean file never
//! falls back.

use std::collections::BTreeMap;

use serde_json::json;

use super::corpus::CASES;
use super::{answer_lines, git_lines};
use crate::common::Fixture;

/// A line no default grammar accepts.
const BROKEN: &str = "))) ((( @@@ ;";
const COMMITS: u64 = 40;

/// A new function in the file's language, as text to insert.
fn function(path: &str, i: u64) -> String {
    match path.rsplit('.').next().unwrap() {
        "rs" => format!("fn gen_{i}(v: u32) -> u32 {{\n    v + {i}\n}}\n"),
        "py" => format!("def gen_{i}(v):\n    return v + {i}\n"),
        "js" => format!("function gen_{i}(v) {{\n  return v + {i};\n}}\n"),
        "ts" => format!("function gen_{i}(v: number): number {{\n  return v + {i};\n}}\n"),
        "go" => format!("func gen{i}(v int) int {{\n\treturn v + {i}\n}}\n"),
        _ => format!("    int gen{i}(int v) {{\n        return v + {i};\n    }}\n"),
    }
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Applies one seeded edit to `text`; returns the new text.
fn edit(rng: &mut Rng, path: &str, text: &str, i: u64) -> String {
    let java = path.ends_with(".java");
    // Generated functions sit at the end (before a Java class's closing brace).
    let (body, tail) = if java {
        let cut = text.trim_end().len() - 1;
        (&text[..cut], &text[cut..])
    } else {
        (text, "")
    };
    let gens: Vec<usize> = body.match_indices("gen").map(|(at, _)| at).collect();
    let starts: Vec<usize> = gens
        .iter()
        .map(|at| body[..*at].rfind('\n').map_or(0, |n| n + 1))
        .collect();
    match rng.below(4) {
        0 | 1 if starts.len() < 2 => format!("{body}\n{}{tail}", function(path, i)),
        0 => {
            // Change one generated body.
            let from = "v + ";
            match body.rfind(&from) {
                Some(at) => format!("{}v * {}{tail}", &body[..at], &body[at + from.len()..]),
                None => format!("{body}\n{}{tail}", function(path, i)),
            }
        }
        1 => {
            // Remove the last generated function.
            let start = *starts.last().unwrap();
            format!(
                "{}{tail}",
                body[..start].trim_end_matches('\n').to_owned() + "\n"
            )
        }
        2 => format!("{body}\n{}{tail}", function(path, i)),
        _ => {
            // Move the last generated function to the top of the file (of the class).
            let start = *starts.last().unwrap_or(&body.len());
            let moved = &body[start..];
            let rest = body[..start].trim_end_matches('\n').to_owned() + "\n";
            let split = if java {
                rest.find('\n').unwrap() + 1
            } else {
                0
            };
            format!("{}{moved}\n{}{tail}", &rest[..split], &rest[split..])
        }
    }
}

#[test]
fn every_line_is_represented_once_and_every_broken_file_falls_back() {
    let fx = Fixture::new();
    let repo = fx.init("history", &[]);
    let mut texts: BTreeMap<&str, String> =
        CASES.iter().map(|c| (c.path, c.new.to_owned())).collect();
    for (path, text) in &texts {
        fx.write(&repo, path, text);
    }
    let mut commits = vec![fx.commit(&repo, "README", "0\n", "start")];
    // Which files were broken at each commit.
    let mut broken: Vec<Vec<&str>> = vec![Vec::new()];
    let mut rng = Rng(7);
    for i in 1..=COMMITS {
        let mut now_broken = Vec::new();
        for case in CASES {
            let text = texts.get_mut(case.path).unwrap();
            let clean = text.replace(&format!("{BROKEN}\n"), "");
            *text = match rng.below(6) {
                0 => clean.clone(),
                1 => {
                    now_broken.push(case.path);
                    let mid = clean[..clean.len() / 2].rfind('\n').map_or(0, |n| n + 1);
                    format!("{}{BROKEN}\n{}", &clean[..mid], &clean[mid..])
                }
                _ => edit(&mut rng, case.path, &clean, i),
            };
            fx.write(&repo, case.path, text);
        }
        commits.push(fx.commit(&repo, "README", &format!("{i}\n"), &format!("edit {i}")));
        broken.push(now_broken);
    }
    let mut server = fx.server(&[], &[]);
    let (mut semantic, mut fell_back) = (0, 0);
    for k in 1..commits.len() {
        let (base, head) = (&commits[k - 1], &commits[k]);
        let result = server.call(
            "diff.semantic",
            json!({ "repoPath": repo, "base": base, "head": head }),
        );
        for file in result["data"]["files"].as_array().unwrap() {
            let path = file["path"].as_str().unwrap();
            if path == "README" {
                continue;
            }
            let was_broken = broken[k - 1].contains(&path) || broken[k].contains(&path);
            if was_broken {
                assert_eq!(file["fallbackToText"], true, "commit {k}: {file}");
                let reason = file["reason"].as_str().unwrap();
                assert!(reason.starts_with("parse-error: "), "commit {k}: {reason}");
                fell_back += 1;
            } else {
                assert_eq!(file["fallbackToText"], false, "commit {k}: {file}");
                let expected = git_lines(&fx, &repo, base, Some(head), path);
                assert_eq!(answer_lines(file), expected, "commit {k}: {path}");
                semantic += 1;
            }
        }
    }
    // The seed gives both kinds plenty of cases.
    assert!(
        semantic > 100 && fell_back > 20,
        "{semantic} semantic, {fell_back} fallbacks"
    );
}
