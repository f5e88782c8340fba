//! Tests of the capture loop: real children misbehaving on cue.

use std::time::Duration;

use super::*;
use crate::sink::Capped;

fn program(path: &str) -> Invocation {
    Invocation::new(Program::Git).program_path(path)
}

/// A child running a Python script, the one tool here that can misbehave on cue.
fn python(script: &str) -> Invocation {
    program("/usr/bin/env").args(["python3", "-c", script])
}

fn alive(pid: u32) -> bool {
    // A zombie still has a /proc entry; look at its state.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

#[tokio::test]
async fn output_past_the_cap_stops_the_child() {
    let cancel = CancellationToken::new();
    let done = program("/usr/bin/yes")
        .capture(100_000, &cancel)
        .await
        .unwrap();
    assert!(done.stopped_early);
    assert!(done.sink.truncated);
    assert_eq!(done.sink.bytes.len(), 100_000);
    assert_eq!(done.code, None);
}

#[tokio::test]
async fn a_deadline_kills_the_child() {
    let cancel = CancellationToken::new();
    let started = std::time::Instant::now();
    let err = program("/bin/sleep")
        .arg("30")
        .timeout(Duration::from_millis(200))
        .capture(1024, &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn cancellation_kills_the_process_group() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    let script = format!(
        "import os,time; open('{}','w').write(str(os.getpid())); time.sleep(30)",
        pid_file.path().display()
    );
    let watched = pid_file.path().to_owned();
    tokio::spawn(async move {
        // Cancel once the child has started and written its pid.
        while std::fs::metadata(&watched).map_or(0, |m| m.len()) == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        trigger.cancel();
    });
    let err = python(&script).capture(1024, &cancel).await.unwrap_err();
    assert!(matches!(err, RunError::Cancelled), "{err:?}");
    let pid: u32 = std::fs::read_to_string(pid_file.path())
        .unwrap()
        .parse()
        .unwrap();
    for _ in 0..50 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("process {pid} survived cancellation");
}

#[tokio::test]
async fn a_child_asked_to_terminate_first_cleans_up_before_the_call_returns() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let dir = tempfile::tempdir().unwrap();
    let (ready, cleaned) = (dir.path().join("ready"), dir.path().join("cleaned"));
    let script = format!(
        "import signal,sys,time\n\
         def stop(*_):\n    time.sleep(0.3); open('{}','w').write('x'); sys.exit(1)\n\
         signal.signal(signal.SIGTERM, stop)\n\
         open('{}','w').write('x')\n\
         time.sleep(30)\n",
        cleaned.display(),
        ready.display()
    );
    tokio::spawn(async move {
        while !ready.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        trigger.cancel();
    });
    let err = python(&script)
        .terminate_first(Duration::from_secs(10))
        .capture(1024, &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::Cancelled), "{err:?}");
    assert!(
        cleaned.exists(),
        "the call returned before the child cleaned up"
    );
}

#[tokio::test]
async fn a_dropped_call_kills_its_child() {
    let cancel = CancellationToken::new();
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    let script = format!(
        "import os,time; open('{}','w').write(str(os.getpid())); time.sleep(30)",
        pid_file.path().display()
    );
    let call = python(&script).capture(1024, &cancel);
    let watched = pid_file.path().to_owned();
    let started = async {
        while std::fs::metadata(&watched).map_or(0, |m| m.len()) == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    // The call is dropped unfinished once its child has started.
    tokio::select! {
        done = call => panic!("the child ended on its own: {done:?}"),
        () = started => {}
    }
    let pid: u32 = std::fs::read_to_string(pid_file.path())
        .unwrap()
        .parse()
        .unwrap();
    for _ in 0..100 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("process {pid} outlived its dropped call");
}

#[tokio::test]
async fn stderr_is_capped_and_drained_without_deadlock() {
    let cancel = CancellationToken::new();
    let done = python("import sys; sys.stderr.write('e'*500000); sys.stdout.write('ok')")
        .capture(1024, &cancel)
        .await
        .unwrap();
    assert_eq!(done.code, Some(0));
    assert_eq!(done.sink.bytes, b"ok");
    assert_eq!(done.stderr.len(), crate::process::STDERR_CAP);
    assert!(done.stderr_truncated);
}

#[tokio::test]
async fn a_child_that_closes_its_pipes_and_lingers_is_reaped_with_its_code() {
    let cancel = CancellationToken::new();
    let done = python(
        "import os,sys,time; sys.stdout.write('out'); sys.stdout.flush(); \
         os.close(1); os.close(2); time.sleep(0.3); sys.exit(7)",
    )
    .capture(1024, &cancel)
    .await
    .unwrap();
    assert_eq!(done.code, Some(7));
    assert_eq!(done.sink.bytes, b"out");
}

#[tokio::test]
async fn exit_codes_and_stdin_bytes() {
    let cancel = CancellationToken::new();
    let done = python("import sys; sys.stdout.write(sys.stdin.read().upper()); sys.exit(3)")
        .stdin(b"hello".to_vec())
        .capture(1024, &cancel)
        .await
        .unwrap();
    assert_eq!(done.code, Some(3));
    assert_eq!(done.sink.bytes, b"HELLO");
}

#[tokio::test]
async fn a_call_cancelled_in_the_queue_never_starts() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let full = Arc::new(Semaphore::new(0));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let queued = {
        let marker = marker.clone();
        tokio::spawn(async move {
            let inv = program("/usr/bin/touch").arg(marker);
            run_within(inv, Capped::new(10), &cancel, &full).await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    trigger.cancel();
    let err = queued.await.unwrap().unwrap_err();
    assert!(matches!(err, RunError::Cancelled), "{err:?}");
    assert!(!marker.exists(), "the child was never started");
}

#[tokio::test]
async fn a_turn_is_held_until_the_child_is_gone() {
    let one = Arc::new(Semaphore::new(1));
    let cancel = CancellationToken::new();
    let done = run_within(program("/bin/true"), Capped::new(10), &cancel, &one)
        .await
        .unwrap();
    assert_eq!(done.code, Some(0));
    assert_eq!(one.available_permits(), 1, "given back after a normal exit");
    let err = run_within(
        program("/bin/sleep")
            .arg("30")
            .timeout(Duration::from_millis(100)),
        Capped::new(10),
        &cancel,
        &one,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, RunError::Timeout { .. }), "{err:?}");
    // Given back by the reaper once the killed child is gone.
    let _turn = tokio::time::timeout(Duration::from_secs(20), Arc::clone(&one).acquire_owned())
        .await
        .expect("the turn comes back")
        .unwrap();
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let cancel = CancellationToken::new();
    let err = program("/nonexistent/git")
        .capture(10, &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::Spawn { .. }), "{err:?}");
}
