//! `git config -z --file .gitmodules --get-regexp ^submodule\.` output.
#![no_main]

use gitward::parse::submodule::Gitmodules;
use gitward_fuzz::{Input, records};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let input = Input::split(bytes);
    if let Ok(parsed) = records(|| Gitmodules::new(input.max()), &input) {
        assert!(parsed.modules.len() <= input.max());
        for module in &parsed.modules {
            if let Some(path) = &module.path {
                assert!(parsed.by_path(path).is_some());
            }
        }
    }
});
