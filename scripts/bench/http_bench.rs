//! The HTTP transport's cost, for `scripts/bench-http.sh`.
//!
//! ```text
//! http_bench vs GITWARD ROUNDS REPO      one warm stdio server and one warm HTTP server
//!     (a kept-alive connection); each round times repo.status on both, alternating which
//!     goes first: prints both medians and the median added by HTTP
//! http_bench burst GITWARD N REPO        N repo.status calls at once, each on its own
//!     connection: time to the last answer, errors, the most git children at once and
//!     the server's peak RSS
//! ```

// A benchmark driver stops at the first failure, with its location.
#![allow(clippy::unwrap_used)]
// A benchmark driver starts the server and prints its figures.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["vs", bin, rounds, repo] => vs(bin, rounds.parse().unwrap_or(200), repo),
        ["burst", bin, n, repo] => burst(bin, n.parse().unwrap_or(1000), repo),
        _ => Err("usage: http_bench vs GITWARD ROUNDS REPO | burst GITWARD N REPO".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("http_bench: {why}");
            ExitCode::FAILURE
        }
    }
}

fn call(id: usize, repo: &str) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "name": "repo.status", "arguments": { "repoPath": repo },
        },
    })
    .to_string()
}

/// `gitward serve --http 127.0.0.1:0`, and the address it printed.
fn http_server(bin: &str) -> Result<(Child, String), String> {
    let mut child = Command::new(bin)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {bin}: {e}"))?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or("no stdout")?)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let start: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
    let addr = start["http"]
        .as_str()
        .and_then(|u| u.strip_prefix("http://"))
        .and_then(|u| u.strip_suffix("/mcp"))
        .ok_or("no address on the start-up line")?
        .to_owned();
    Ok((child, addr))
}

/// POSTs `body` on a kept-alive connection; returns the response body.
fn post(conn: &mut BufReader<TcpStream>, addr: &str, body: &str) -> Result<Value, String> {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    conn.get_mut()
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut length = 0;
    loop {
        let mut line = String::new();
        if conn.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("connection closed".into());
        }
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().map_err(|_| "bad content-length")?;
        }
    }
    let mut body = vec![0; length];
    conn.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body).map_err(|e| e.to_string())
}

fn connect(addr: &str) -> Result<BufReader<TcpStream>, String> {
    let stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    Ok(BufReader::new(stream))
}

fn vs(bin: &str, rounds: usize, repo: &str) -> Result<(), String> {
    let mut stdio = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdin = stdio.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(stdio.stdout.take().ok_or("no stdout")?);
    let mut over_stdio = |id: usize| -> Result<Duration, String> {
        let started = Instant::now();
        writeln!(stdin, "{}", call(id, repo)).map_err(|e| e.to_string())?;
        let mut line = String::new();
        stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        let took = started.elapsed();
        let reply: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
        ok(&reply)?;
        Ok(took)
    };
    let (mut server, addr) = http_server(bin)?;
    let mut conn = connect(&addr)?;
    let mut over_http = |id: usize| -> Result<Duration, String> {
        let started = Instant::now();
        let reply = post(&mut conn, &addr, &call(id, repo))?;
        let took = started.elapsed();
        ok(&reply)?;
        Ok(took)
    };
    // Warm both: the first status of a repository fills the OS caches.
    over_stdio(0)?;
    over_http(0)?;
    let (mut s, mut h) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        if round % 2 == 0 {
            s.push(over_stdio(round)?);
            h.push(over_http(round)?);
        } else {
            h.push(over_http(round)?);
            s.push(over_stdio(round)?);
        }
    }
    let (sm, hm) = (median(&mut s), median(&mut h));
    println!(
        "repo.status ({rounds} rounds): stdio median {sm:.2} ms, HTTP median {hm:.2} ms, \
         added by HTTP {:.2} ms",
        hm - sm
    );
    let _ = stdio.kill();
    let _ = server.kill();
    Ok(())
}

fn ok(reply: &Value) -> Result<(), String> {
    if reply["result"]["isError"] == json!(false) {
        Ok(())
    } else {
        Err(format!("repo.status failed: {reply}"))
    }
}

fn median(times: &mut [Duration]) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn burst(bin: &str, n: usize, repo: &str) -> Result<(), String> {
    let (mut server, addr) = http_server(bin)?;
    let pid = server.id();
    let (most, stop) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let sampler = {
        let (most, stop) = (Arc::clone(&most), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                most.fetch_max(git_children(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let gate = Arc::new(Barrier::new(n + 1));
    let errors = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..n)
        .map(|id| {
            let (gate, errors, addr, body) = (
                Arc::clone(&gate),
                Arc::clone(&errors),
                addr.clone(),
                call(id, repo),
            );
            std::thread::spawn(move || {
                let conn = connect(&addr);
                gate.wait();
                let answered = conn.and_then(|mut c| post(&mut c, &addr, &body));
                if answered.and_then(|reply| ok(&reply)).is_err() {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    gate.wait();
    let started = Instant::now();
    for client in clients {
        let _ = client.join();
    }
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_default();
    println!(
        "{n} concurrent HTTP repo.status: all answered in {:.2} s ({} errors), at most {} git \
         children at once, server peak RSS {hwm}",
        elapsed.as_secs_f64(),
        errors.load(Ordering::Relaxed),
        most.load(Ordering::Relaxed),
    );
    let _ = server.kill();
    Ok(())
}

fn git_children(parent: u32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                return false;
            };
            let ppid = stat[close + 1..].split_whitespace().nth(1);
            &stat[open + 1..close] == "git" && ppid == Some(parent.to_string().as_str())
        })
        .count()
}
