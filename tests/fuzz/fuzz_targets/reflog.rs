//! Reflog entries both ways `parse::reflog` reads them: a log file's tail (whole or
//! starting mid-line, per the parameter's top bit) and `git log -g -z` output.
#![no_main]

use gitward::parse::reflog::{Walk, newest_lines, parse_line};
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let max = input.max();
    let complete = input.param & 0x80 != 0;
    if let Ok(entries) = newest_lines(input.data, complete, max) {
        assert!(entries.len() <= max);
    }
    for line in input.data.split(|b| *b == b'\n') {
        if let Ok(entry) = parse_line(line, 0) {
            assert_eq!(entry.tz.len(), 5);
            assert!(!entry.old_inferred);
        }
    }
    if let Ok(walk) = records(|| Walk::new(max), &input) {
        let more = walk.more();
        let entries = walk.into_entries();
        assert!(entries.len() <= max);
        assert!(!more || entries.len() == max);
    }
});
