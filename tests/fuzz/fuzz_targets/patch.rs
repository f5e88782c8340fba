//! `git diff` patch text under a keep cap and a count budget, then cut to a byte and
//! line limit.
#![no_main]

use std::time::Duration;

use gitward::parse::patch::Patch;
use gitward_fuzz::{Chunks, Input, feed};
use libfuzzer_sys::fuzz_target;

/// Far beyond any run, so only the byte budget stops counting.
const NO_TIME_LIMIT: Duration = Duration::from_secs(24 * 3600);

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let keep = input.max() * 16;
    let budget = match input.param >> 4 {
        15 => u64::MAX,
        n => u64::from(n) * 64,
    };

    let mut whole = Patch::new(keep, budget, NO_TIME_LIMIT);
    feed(&mut whole, input.data, None);
    let mut chunked = Patch::new(keep, budget, NO_TIME_LIMIT);
    feed(
        &mut chunked,
        input.data,
        Some(&mut Chunks::new(input.seed, 64)),
    );

    assert_eq!(whole.kept, chunked.kept, "chunking changed the kept text");
    assert!(whole.kept.len() <= keep + 1);
    if !whole.stopped && !chunked.stopped {
        assert_eq!(whole.total_bytes, input.data.len() as u64);
        assert_eq!(
            (whole.total_lines, &whole.binary_files, whole.binary_total),
            (
                chunked.total_lines,
                &chunked.binary_files,
                chunked.binary_total
            ),
            "chunking changed the counts"
        );
    }
    assert!(whole.binary_files.len() as u64 <= whole.binary_total);

    let max_bytes = usize::from(input.seed) % (keep + 2);
    let max_lines = (input.seed & 0x80 != 0).then_some(u64::from(input.seed & 0x07));
    let (text, cut) = whole.cut(max_bytes, max_lines);
    assert!(whole.kept.starts_with(text));
    assert!(text.len() <= max_bytes);
    if text.len() < whole.kept.len() {
        assert!(cut, "text was cut but not flagged");
    }
    // Within the valid UTF-8 part of the kept text, a cut falls on a character boundary
    // (invalid bytes have no boundaries to keep).
    let valid = match std::str::from_utf8(&whole.kept) {
        Ok(_) => whole.kept.len(),
        Err(e) => e.valid_up_to(),
    };
    if text.len() <= valid {
        assert!(
            std::str::from_utf8(text).is_ok(),
            "cut inside a UTF-8 character"
        );
    }
});
