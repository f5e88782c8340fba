//! `git log -g -z --date=raw` output for reftable repositories.
#![no_main]

use gitward::parse::reflog_walk::Walk;
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    if let Ok(walk) = records(|| Walk::new(input.max()), &input) {
        assert!(walk.entries.len() <= input.max());
        assert!(walk.entries.iter().all(|e| !e.refname.is_empty()));
    }
});
