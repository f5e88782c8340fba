//! `gitward gateway --open`: the login link handed to the person's browser — a fake
//! opener on `PATH` that records its argv — found only in absolute `PATH` entries outside
//! repositories; a missing or failing opener is a warning, never a failed start. The
//! opener is given a private file that forwards to the link, never the link itself: an
//! argv is readable by every local user.

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

/// The one argument the opener got: a private file whose page forwards to the link.
/// Checks it holds no secret itself, and returns the link the file forwards to.
fn opened_link(argv: &str, login: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let token = login.split_once('#').unwrap().1;
    assert!(
        !argv.contains(token),
        "the link's token on a command line: {argv}"
    );
    let lines: Vec<&str> = argv.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one argument: {argv}");
    let file = Path::new(lines[0]);
    assert!(file.is_absolute(), "{argv}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(file), 0o600, "{}", file.display());
    assert_eq!(mode(file.parent().unwrap()), 0o700, "{}", file.display());
    let page = std::fs::read_to_string(file).unwrap();
    let at = page.find("url=").unwrap() + "url=".len();
    page[at..].split('"').next().unwrap().to_owned()
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
    assert_eq!(opened_link(&argv, &gw.login), gw.login);
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
    assert_eq!(opened_link(&wait_for_file(&record), &gw.login), gw.login);
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

#[test]
fn the_login_link_reaches_neither_the_openers_argv_nor_its_environment_and_its_file_goes() {
    let fixture = Fixture::new();
    let record = fixture.path("opened.txt");
    let bin = fixture.path("bin");
    // Records everything a process-table watcher could read: argv and environment.
    write_executable(
        &bin.join("my-browser"),
        &format!(
            "#!/bin/sh\n{{ printf '%s\\n' \"$@\"; echo ---; env; }} > '{0}.tmp' && mv '{0}.tmp' '{0}'\n",
            record.display()
        ),
    );
    let path = path_of(std::slice::from_ref(&bin));
    let gw = Gateway::start(
        &fixture,
        &["--open"],
        &[("PATH", &path), ("BROWSER", "my-browser")],
    );
    let seen = wait_for_file(&record);
    let token = gw.login_token();
    assert!(
        !seen.contains(&token),
        "the token reached the opener: {seen}"
    );
    let argv = seen.split("---\n").next().unwrap();
    assert_eq!(opened_link(argv, &gw.login), gw.login);
    let file = PathBuf::from(argv.trim());
    // The gateway's own command line holds no secret either.
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", gw.pid())).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains(&token));

    // Once the link is used the file is gone.
    let _session = gw.login();
    let until = Instant::now() + Duration::from_secs(30);
    while file.exists() {
        assert!(Instant::now() < until, "{} stayed", file.display());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!file.parent().unwrap().exists());
}
