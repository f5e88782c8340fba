//! `git status --porcelain=v2 -z --branch --show-stash` output.
#![no_main]

use gitward::parse::status_v2::Status;
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    if let Ok(parsed) = records(|| Status::new(input.max()), &input) {
        assert!(parsed.entries.len() <= input.max());
        assert_eq!(
            parsed.truncated(),
            parsed.counts.entries > parsed.entries.len() as u64
        );
        let c = parsed.counts;
        assert!(c.untracked + c.ignored + c.conflicted <= c.entries);
    }
});
