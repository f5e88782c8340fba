//! `git worktree list --porcelain -z` output.
#![no_main]

use gitward::parse::worktree::Worktrees;
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    if let Ok(parsed) = records(|| Worktrees::new(input.max()), &input) {
        assert!(parsed.worktrees.len() <= input.max());
        assert!(parsed.worktrees.len() as u64 <= parsed.total);
    }
});
