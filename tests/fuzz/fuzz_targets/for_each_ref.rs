//! `git for-each-ref --format=<f1>%00…<fn>%00` output split into rows of 1–8 fields, and
//! the upstream tracking text found in any field.
#![no_main]

use gitward::parse::for_each_ref::{Collect, ForEachRef, track};
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let width = 1 + usize::from(input.param >> 5);
    let max = input.max();
    if let Ok(parsed) = records(|| ForEachRef::new(width, Collect::new(max)), &input) {
        assert!(parsed.rows.rows.len() <= max);
        for row in &parsed.rows.rows {
            assert_eq!(row.len(), width);
            for field in row {
                let _ = track(field);
            }
        }
    }
    for field in input.data.split(|b| *b == 0) {
        let _ = track(field);
    }
});
