//! `git log -z --format=<FORMAT>` output.
#![no_main]

use gitward::parse::log::Log;
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    if let Ok(parsed) = records(|| Log::new(input.max()), &input) {
        assert!(parsed.commits.len() <= input.max());
        assert!(parsed.commits.len() as u64 <= parsed.seen);
        for commit in &parsed.commits {
            let _ = commit.oid.short();
        }
    }
});
