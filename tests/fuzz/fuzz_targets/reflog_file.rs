//! One reflog file line at a time (`logs/HEAD`, `logs/refs/…`).
#![no_main]

use gitward::parse::reflog_file::parse_line;
use gitward_fuzz::Input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    let mut offset = 0;
    for line in input.data.split(|b| *b == b'\n') {
        match parse_line(line, offset) {
            Ok(entry) => {
                assert_eq!(entry.old.as_str().len(), entry.new.as_str().len());
                assert_eq!(entry.tz.len(), 5);
                assert!(entry.time >= 0);
            }
            Err(e) => assert!(
                e.offset <= offset + line.len(),
                "error offset past the line"
            ),
        }
        offset += line.len() + 1;
    }
});
