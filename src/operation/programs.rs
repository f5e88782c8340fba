//! The programs a write may start from the repository's side, read for the card and
//! checked again right before the write ([`crate::git::write::programs`]).

use serde_json::Value;

use super::{Ctx, OpError};
use crate::git::write::programs::{self, Programs};

/// What a write in `ctx`'s repository may start, and what may not run.
pub async fn read(ctx: Ctx<'_>) -> Result<Programs, OpError> {
    let repo = ctx.repo;
    // Where a trusted driver's program may not live: anywhere the caller can write.
    let forbidden: Vec<std::path::PathBuf> = [
        repo.worktree.as_deref(),
        Some(repo.git_dir.as_path()),
        Some(repo.common_dir.as_path()),
    ]
    .into_iter()
    .flatten()
    .filter_map(|p| std::fs::canonicalize(p).ok())
    .chain(ctx.config.allowed_roots.iter().cloned())
    .collect();
    programs::read(
        &repo.path,
        &repo.common_dir,
        &ctx.config.trusted_drivers,
        &forbidden,
        &ctx.config.user.search_path,
        ctx.cancel,
    )
    .await
    .map_err(|e| OpError::Internal(e.to_string()))
}

/// The list as a card and a result show it.
pub fn shown(programs: &Programs) -> Value {
    serde_json::to_value(&programs.programs).unwrap_or(Value::Null)
}

/// Adds the list (and, when some may not run, why) to a card's preview.
pub async fn annotate(ctx: Ctx<'_>, preview: &mut Value) {
    let Some(card) = preview.as_object_mut() else {
        return;
    };
    match read(ctx).await {
        Ok(found) => {
            card.insert("programs".into(), shown(&found));
            if let Some(why) = found.refusal() {
                card.insert("programsRefused".into(), Value::String(why));
            }
        }
        Err(e) => {
            card.insert("programsRefused".into(), Value::String(e.to_string()));
        }
    }
}

/// Right before the write: refuses what may not run, and what the card did not list
/// (`listed`, from its preview). Returns the list to record.
pub async fn check(ctx: Ctx<'_>, listed: Option<&Value>) -> Result<Value, OpError> {
    let found = read(ctx).await?;
    if let Some(why) = found.refusal() {
        return Err(OpError::Unsupported(why));
    }
    let now = shown(&found);
    if let Some(listed) = listed
        && *listed != now
    {
        return Err(OpError::Stale {
            moved: vec![super::Moved {
                what: "programs the write runs".into(),
                expected: listed.clone(),
                found: now,
            }],
        });
    }
    Ok(now)
}
