//! `git cat-file --batch` output: object headers and contents under per-object and total
//! byte caps.
#![no_main]

use gitward::parse::cat_file_batch::{Answer, Batch};
use gitward_fuzz::{Chunks, Input, feed};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let keep = input.max();
    let budget = usize::from(input.param >> 4) * 4;

    let mut whole = Batch::new(keep, budget);
    let complete = feed(&mut whole, input.data, None);
    let whole = whole.finish(complete);
    let mut chunked = Batch::new(keep, budget);
    let complete = feed(
        &mut chunked,
        input.data,
        Some(&mut Chunks::new(input.seed, 64)),
    );
    let chunked = chunked.finish(complete);
    assert_eq!(whole, chunked, "chunking changed the result");

    if let Ok(answers) = whole {
        let mut kept = 0;
        for answer in &answers {
            if let Answer::Found(object) = answer {
                assert!(object.bytes.len() <= keep);
                assert!(object.bytes.len() as u64 <= object.size);
                assert_eq!(
                    object.truncated(),
                    (object.bytes.len() as u64) < object.size
                );
                let _ = object.oid.short();
                kept += object.bytes.len();
            }
        }
        assert!(
            kept <= budget,
            "kept {kept} bytes over a budget of {budget}"
        );
    }
});
