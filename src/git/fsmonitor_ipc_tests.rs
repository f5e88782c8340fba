use std::path::{Path, PathBuf};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

fn packet(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:04x}", data.len() + 4).into_bytes();
    out.extend_from_slice(data);
    out
}

fn answer(parts: &[&[u8]]) -> Vec<u8> {
    let mut out: Vec<u8> = parts.iter().flat_map(|p| packet(p)).collect();
    out.extend_from_slice(b"0000");
    out
}

/// A stand-in daemon on `dir`'s socket: reads one request up to its flush packet, waits
/// `delay`, then writes `reply`. Returns the request it read.
fn serve(dir: &Path, reply: Vec<u8>, delay: Duration) -> tokio::task::JoinHandle<Vec<u8>> {
    let listener = tokio::net::UnixListener::bind(dir.join(SOCKET)).unwrap();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.ends_with(b"0000") {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
        }
        tokio::time::sleep(delay).await;
        let _ = stream.write_all(&reply).await;
        request
    })
}

fn git_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".git");
    std::fs::create_dir(&dir).unwrap();
    (tmp, dir)
}

#[test]
fn a_request_is_the_token_and_a_flush() {
    assert_eq!(
        request("builtin:1:2").unwrap(),
        b"000fbuiltin:1:20000".to_vec()
    );
    assert_eq!(request(""), None);
    assert_eq!(request("a\0b"), None);
    assert_eq!(request(&"x".repeat(TOKEN_CAP + 1)), None);
}

#[test]
fn answers_are_parsed_strictly() {
    let token = "builtin:123.456.2026:7".to_owned();
    let quiet = Answer {
        token: token.clone(),
        changed: false,
    };
    let moved = Answer {
        token,
        changed: true,
    };
    assert_eq!(parse(b"builtin:123.456.2026:7\0"), Some(quiet));
    assert_eq!(parse(b"builtin:123.456.2026:7\0/\0"), Some(moved.clone()));
    assert_eq!(parse(b"builtin:123.456.2026:7\0a.txt\0b/c\0"), Some(moved));
    for garbage in [
        &b""[..],
        b"builtin:1:2",
        b"builtin:1:2\0a.txt",
        b"builtin::2\0",
        b"builtin:1:x\0",
        b"watchman:1:2\0",
        b"builtin:a b:2\0",
        b"\xff\0",
    ] {
        assert_eq!(parse(garbage), None, "{garbage:?}");
    }
}

#[test]
fn packets_arrive_in_pieces_and_are_capped() {
    let whole = answer(&[b"builtin:1:2\0", b"a\0"]);
    let mut packets = Packets::default();
    for end in 0..whole.len() {
        assert!(matches!(packets.feed(&whole[..end]), Some(Fed::More)));
    }
    let Some(Fed::Done(payload)) = packets.feed(&whole) else {
        panic!("complete");
    };
    assert_eq!(payload, b"builtin:1:2\0a\0");
    assert!(Packets::default().feed(b"zzzz").is_none());
    assert!(Packets::default().feed(b"0003").is_none());

    let path = vec![b'p'; 60_000];
    let mut big = packet(b"builtin:1:2\0");
    big.extend(packet(&path));
    big.extend(packet(&path));
    let Some(Fed::TooMuch(head)) = Packets::default().feed(&big) else {
        panic!("capped");
    };
    assert_eq!(parse_head(&head).map(|a| a.changed), Some(true));
}

#[tokio::test]
async fn asks_the_daemon_through_its_socket() {
    let (_tmp, dir) = git_dir();
    let daemon = serve(&dir, answer(&[b"builtin:9.9:3\0", b"x\0"]), Duration::ZERO);
    let got = changes_since(&dir, "builtin:9.9:1").await;
    assert_eq!(
        got,
        Some(Answer {
            token: "builtin:9.9:3".into(),
            changed: true
        })
    );
    assert_eq!(daemon.await.unwrap(), request("builtin:9.9:1").unwrap());
}

#[tokio::test]
async fn garbage_oversized_and_slow_answers_are_no_answer_or_a_change() {
    let (_tmp, dir) = git_dir();
    let _d = serve(&dir, b"HTTP/1.1 200 OK\r\n\r\n".to_vec(), Duration::ZERO);
    assert_eq!(changes_since(&dir, NO_TOKEN).await, None, "garbage");
    std::fs::remove_file(dir.join(SOCKET)).unwrap();

    let mut huge = packet(b"builtin:1:2\0");
    for _ in 0..40 {
        huge.extend(packet(&[b'q'; 60_000]));
    }
    let _d = serve(&dir, huge, Duration::ZERO);
    let got = changes_since(&dir, "builtin:1:1").await;
    assert_eq!(got.map(|a| a.changed), Some(true), "oversized");
    std::fs::remove_file(dir.join(SOCKET)).unwrap();

    let _d = serve(
        &dir,
        answer(&[b"builtin:1:2\0"]),
        DEADLINE + Duration::from_millis(500),
    );
    assert_eq!(changes_since(&dir, "builtin:1:1").await, None, "slow");
}

#[tokio::test]
async fn only_our_own_socket_in_place_is_used() {
    let (tmp, dir) = git_dir();
    let socket = dir.join(SOCKET);

    // A symbolic link to a live socket elsewhere.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let _d = serve(&elsewhere, answer(&[b"builtin:1:2\0"]), Duration::ZERO);
    std::os::unix::fs::symlink(elsewhere.join(SOCKET), &socket).unwrap();
    assert_eq!(changes_since(&dir, NO_TOKEN).await, None, "symlink");
    std::fs::remove_file(&socket).unwrap();

    std::fs::write(&socket, answer(&[b"builtin:1:2\0"])).unwrap();
    assert_eq!(changes_since(&dir, NO_TOKEN).await, None, "regular file");
    std::fs::remove_file(&socket).unwrap();

    rustix::fs::mknodat(
        rustix::fs::CWD,
        &socket,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    assert_eq!(changes_since(&dir, NO_TOKEN).await, None, "fifo");
    std::fs::remove_file(&socket).unwrap();

    assert_eq!(changes_since(&dir, NO_TOKEN).await, None, "no socket");

    let _d = serve(&dir, answer(&[b"builtin:1:2\0"]), Duration::ZERO);
    if rustix::process::geteuid().is_root() {
        let nobody = Some(rustix::process::Uid::from_raw(65534));
        rustix::fs::chown(&socket, nobody, None).unwrap();
        assert_eq!(changes_since(&dir, NO_TOKEN).await, None, "someone else's");
        rustix::fs::chown(&socket, Some(rustix::process::geteuid()), None).unwrap();
    } else {
        eprintln!("not root: a socket owned by someone else cannot be made here");
    }
    let got = changes_since(&dir, NO_TOKEN).await;
    assert_eq!(got.map(|a| a.token), Some("builtin:1:2".into()), "ours");
}
