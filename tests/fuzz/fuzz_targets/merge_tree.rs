//! `git merge-tree --write-tree -z` output: tree, conflicted stages and messages.
#![no_main]

use gitward::parse::merge_tree::MergeTree;
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let max = input.max();
    if let Ok(parsed) = records(|| MergeTree::new(max), &input) {
        assert!(parsed.other.len() <= max);
        assert!(parsed.other.len() as u64 <= parsed.other_total);
        assert_eq!(parsed.types.len(), parsed.stages.unmerged.len());
        for (unmerged, types) in parsed.conflicts() {
            let _ = unmerged.kind();
            assert!(types.len() <= 8);
        }
    }
});
