//! `CODEOWNERS` files and owner lookups: the file is the data up to the first NUL, the
//! paths to look up follow, NUL-separated.
#![no_main]

use gitward::parse::codeowners;
use gitward_fuzz::Input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let mut parts = input.data.split(|b| *b == 0);
    let file = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let owners = codeowners::parse(&file);
    for (line, _) in &owners.skipped {
        assert!(*line >= 1);
    }
    for (i, path) in parts.take(16).enumerate() {
        let path = String::from_utf8_lossy(path);
        let is_dir = (input.param >> (i % 8)) & 1 == 1;
        if let Some(rule) = owners.owner_rule(&path, is_dir) {
            assert!(owners.rules.contains(rule));
        }
    }
});
