//! Fleet tools: many repositories in one call — `fleet.radar` (which repository needs
//! attention now) and `fleet.digest` (what moved since a time).
//!
//! Both take a list of repository paths, check each one like a `repoPath` (absolute,
//! canonical, inside the allowed roots) and work on the repositories concurrently with a
//! fixed bound, so one slow or broken repository costs its own slot, never the call. A
//! repository that cannot be read is reported with its error beside the others; only
//! malformed arguments fail the whole call.

pub mod digest;
pub mod radar;

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::ToolError;

/// The result envelope of a fleet tool: like [`super::Local`] without a single `repoPath`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fleet<D> {
    pub tool: &'static str,
    pub read_only: bool,
    /// Always `local-git`: computed from local repositories only.
    pub source: &'static str,
    pub data: D,
}

impl<D> Fleet<D> {
    fn new(tool: &'static str, data: D) -> Fleet<D> {
        Fleet {
            tool,
            read_only: true,
            source: "local-git",
            data,
        }
    }
}

/// Checks what can be checked about a list of paths without touching the disk: its length
/// and that each entry is a plausible absolute path. Errors name the entry (`field[3]`).
fn check_paths<'a>(
    field: &str,
    paths: impl ExactSizeIterator<Item = &'a str>,
    max: usize,
) -> Result<(), ToolError> {
    if paths.len() > max {
        return Err(ToolError::invalid(
            field,
            format!("at most {max} repositories, got {}", paths.len()),
        ));
    }
    for (i, path) in paths.enumerate() {
        let at = format!("{field}[{i}]");
        if path.is_empty() {
            return Err(ToolError::invalid(&at, "must not be empty"));
        }
        if path.chars().any(char::is_control) {
            return Err(ToolError::invalid(
                &at,
                "must not contain control characters",
            ));
        }
        if !std::path::Path::new(path).is_absolute() {
            return Err(ToolError::invalid(&at, "must be an absolute path"));
        }
    }
    Ok(())
}

/// The short reason of a per-repository failure, as shown beside that repository.
fn reason(err: crate::git::GitError) -> String {
    let err = ToolError::from(err);
    match err.data.get("reason").and_then(|r| r.as_str()) {
        Some(reason) if err.code == crate::error::code::INVALID_PARAMS => reason.to_owned(),
        _ => err.message.clone(),
    }
}

/// Runs `work` on every item with at most `limit` running at once; results keep the
/// order of `items`. A task that panicked yields `None`.
async fn bounded<T, F, Fut>(items: Vec<T>, limit: usize, work: F) -> Vec<Option<Fut::Output>>
where
    F: Fn(T) -> Fut,
    Fut: Future + Send + 'static,
    Fut::Output: Send + 'static,
{
    let permits = Arc::new(tokio::sync::Semaphore::new(limit.max(1)));
    let mut set = tokio::task::JoinSet::new();
    let count = items.len();
    for (i, item) in items.into_iter().enumerate() {
        let permits = Arc::clone(&permits);
        let fut = work(item);
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            (i, fut.await)
        });
    }
    let mut out: Vec<Option<Fut::Output>> = (0..count).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        if let Ok((i, value)) = joined {
            out[i] = Some(value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_lists_are_checked_entry_by_entry() {
        let err = |paths: &[&str], max| {
            check_paths("repoPaths", paths.iter().copied(), max)
                .unwrap_err()
                .data
        };
        insta::assert_json_snapshot!([
            err(&["/a", "rel"], 10),
            err(&["/a", ""], 10),
            err(&["/a\nb"], 10),
            err(&["/a", "/b", "/c"], 2),
        ], @r#"
        [
          {
            "field": "repoPaths[1]",
            "reason": "must be an absolute path"
          },
          {
            "field": "repoPaths[1]",
            "reason": "must not be empty"
          },
          {
            "field": "repoPaths[0]",
            "reason": "must not contain control characters"
          },
          {
            "field": "repoPaths",
            "reason": "at most 2 repositories, got 3"
          }
        ]
        "#);
        assert!(check_paths("repoPaths", ["/a", "/b"].into_iter(), 2).is_ok());
    }
}
