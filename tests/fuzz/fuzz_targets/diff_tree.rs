//! `git diff-tree -r -z` output, both `--name-status` and `--numstat` (the parameter's
//! top bit picks which).
#![no_main]

use gitward::parse::diff_tree::{NameStatus, Numstat};
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let max = input.max();
    if input.param & 0x80 == 0 {
        if let Ok(parsed) = records(|| NameStatus::new(max), &input) {
            assert!(parsed.changes.len() <= max);
            assert!(parsed.changes.len() as u64 <= parsed.total);
            for change in &parsed.changes {
                assert!(change.score.is_none_or(|s| s <= 100));
            }
        }
    } else if let Ok(parsed) = records(|| Numstat::new(max), &input) {
        assert!(parsed.stats.len() <= max);
        assert!(parsed.stats.len() as u64 <= parsed.files);
        assert!(parsed.binary <= parsed.files);
    }
});
