//! Bursts on one connection: every call answered, never more git children at once than the
//! bound, and `ping` answered while calls wait their turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::common::{Fixture, MODERN};

/// Children of `parent` whose command name is `git`, from `/proc`.
fn git_children(parent: u32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                return false;
            };
            let comm = &stat[open + 1..close];
            let ppid = stat[close + 1..].split_whitespace().nth(1);
            comm == "git" && ppid == Some(parent.to_string().as_str())
        })
        .count()
}

#[test]
fn a_burst_is_answered_within_the_child_bound() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &[]);
    fx.commit(&repo, "a.txt", "a\n", "first");
    let bound = 4;
    let mut server = fx.server(&[], &[("GITWARD_MAX_CHILDREN", "4")]);
    let pid = server.pid();

    let peak = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(git_children(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };

    let n = 1000;
    let mut burst = Vec::new();
    for id in 1..=n {
        let call = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {
                "name": "repo.status", "arguments": { "repoPath": repo },
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        });
        burst.extend(call.to_string().into_bytes());
        burst.push(b'\n');
    }
    burst.extend(br#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#);
    burst.push(b'\n');
    server.send_raw(&burst);

    let mut answered = 0;
    let mut ping_at = None;
    for position in 0..=n {
        let reply = server.recv();
        if reply["id"] == "ping" {
            assert_eq!(reply["result"], json!({}), "{reply}");
            ping_at = Some(position);
        } else {
            assert_eq!(reply["result"]["isError"], false, "{reply}");
            answered += 1;
        }
    }
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert_eq!(answered, n, "every call answered");
    let ping_at = ping_at.expect("ping answered");
    assert!(
        ping_at < n,
        "ping is answered while calls wait, not after all of them ({ping_at})"
    );
    let peak = peak.load(Ordering::Relaxed);
    assert!(peak >= 1, "the sampler saw the children");
    assert!(peak <= bound, "{peak} git children at once, bound {bound}");
}
