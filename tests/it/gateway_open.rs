//! `gitward gateway --open`: the login link handed to the person's browser — a fake
//! opener on `PATH` that records its argv — found only in absolute `PATH` entries outside
//! repositories; a missing or failing opener is a warning, never a failed start.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::common::{Fixture, write_executable};
use super::gateway_support::Gateway;

/// An opener that writes its argv, one per line, to `record` (renamed into place, so a
/// reader never sees half of it).
fn recording_opener(path: &Path, record: &Path) {
    write_executable(
        path,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{0}.tmp' && mv '{0}.tmp' '{0}'\n",
            record.display()
        ),
    );
}

/// Waits for `path` to appear (a bound on a background step, not a timing assertion).
fn wait_for_file(path: &Path) -> String {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text;
        }
        assert!(Instant::now() < until, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads the gateway's stderr until a line contains `needle`.
fn stderr_line(gw: &mut Gateway, needle: &str) -> String {
    let mut lines = BufReader::new(gw.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            lines.read_line(&mut line).unwrap() > 0,
            "stderr ended without {needle:?}: {seen}"
        );
        if line.contains(needle) {
            return line;
        }
        seen.push_str(&line);
    }
}

fn path_of(dirs: &[PathBuf]) -> String {
    let mut all: Vec<PathBuf> = dirs.to_vec();
    all.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(all)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn open_hands_the_login_link_to_the_opener_found_outside_repositories() {
    let fixture = Fixture::new();
    let record = fixture.path("opened.txt");
    let decoy_record = fixture.path("decoy.txt");
    // Earlier on PATH, but inside a repository: never run.
    let repo = fixture.init("r", &[]);
    recording_opener(&repo.join("bin/xdg-open"), &decoy_record);
    let bin = fixture.path("bin");
    recording_opener(&bin.join("xdg-open"), &record);
    let path = path_of(&[PathBuf::from("relative-bin"), repo.join("bin"), bin]);

    let gw = Gateway::start(&fixture, &["--open"], &[("PATH", &path)]);
    let argv = wait_for_file(&record);
    assert_eq!(
        argv,
        format!("{}\n", gw.login),
        "exactly one argument: the link"
    );
    assert!(gw.login.contains("/login#"), "{}", gw.login);
    assert!(!decoy_record.exists(), "the opener inside a repository ran");
    // The link still works: opening it did not use it up.
    let _session = gw.login();
}

#[test]
fn browser_names_the_opener_and_a_failing_one_is_only_a_warning() {
    let fixture = Fixture::new();
    let record = fixture.path("opened.txt");
    let bin = fixture.path("bin");
    recording_opener(&bin.join("my-browser"), &record);
    let path = path_of(std::slice::from_ref(&bin));
    let gw = Gateway::start(
        &fixture,
        &["--open"],
        &[("PATH", &path), ("BROWSER", "my-browser")],
    );
    assert_eq!(wait_for_file(&record), format!("{}\n", gw.login));
    drop(gw);

    // An opener that fails, and one that is nowhere: the gateway serves all the same.
    write_executable(&bin.join("xdg-open"), "#!/bin/sh\nexit 3\n");
    let mut gw = Gateway::start(&fixture, &["--open"], &[("PATH", &path)]);
    let line = stderr_line(&mut gw, "could not open the browser");
    assert!(line.contains("exited with 3"), "{line}");
    let _session = gw.login();
    // One gateway per run directory: the next one starts after this one ends.
    drop(gw);

    let mut gw = Gateway::start(
        &fixture,
        &["--open"],
        &[("PATH", &path), ("BROWSER", "firefox --new-window")],
    );
    let line = stderr_line(&mut gw, "could not open the browser");
    assert!(line.contains("holds arguments"), "{line}");
    let _session = gw.login();
}
