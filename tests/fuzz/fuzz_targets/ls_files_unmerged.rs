//! `git ls-files -u -z` / `-s -z` output, grouped into unmerged paths; the parameter's
//! top bit keeps only gitlinks among merged entries.
#![no_main]

use gitward::parse::ls_files_unmerged::{GITLINK, Stages, entry};
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let max = input.max();
    let make = || {
        let stages = Stages::new(max);
        if input.param & 0x80 == 0 {
            stages
        } else {
            stages.only_mode(GITLINK)
        }
    };
    if let Ok(parsed) = records(make, &input) {
        assert!(parsed.merged.len() <= max);
        assert!(parsed.unmerged.len() <= max);
        assert!(parsed.unmerged.len() as u64 <= parsed.unmerged_total);
        for unmerged in &parsed.unmerged {
            let _ = unmerged.kind();
        }
    }
    for record in input.data.split(|b| *b == 0) {
        if let Ok(e) = entry(record, 0) {
            assert!(e.stage <= 3);
            assert!(!e.path.is_empty());
        }
    }
});
