//! `git config --null --get-regexp` output.
#![no_main]

use gitward::parse::config::Entries;
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    if let Ok(parsed) = records(|| Entries::new(input.max()), &input) {
        assert!(parsed.entries.len() <= input.max());
        assert!(parsed.entries.len() as u64 <= parsed.total);
    }
});
