//! `git log -g -z --format=%H%x00%gs refs/stash` output.
#![no_main]

use gitward::parse::stash::Stashes;
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    if let Ok(parsed) = records(|| Stashes::new(input.max()), &input) {
        assert!(parsed.stashes.len() <= input.max());
        for (i, stash) in parsed.stashes.iter().enumerate() {
            assert_eq!(stash.index, i as u64);
        }
    }
});
