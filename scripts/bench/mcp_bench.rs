//! A small MCP client for `scripts/bench.sh`: it measures gitward the way a host uses it,
//! one long-lived process answering many requests over stdio.
//!
//! ```text
//! mcp_bench calls GITWARD N TOOL ARGS_JSON   start once, then N modern tools/call
//! mcp_bench latency GITWARD N TOOL ARGS_JSON start once, then N tools/call one after
//!     another (MCP_BENCH_GAP_MS apart, untimed, when set), each timed: prints min, median,
//!     p95 and mean
//! mcp_bench startup GITWARD RUNS             process start → answered initialize, RUNS times
//! mcp_bench peak GITWARD TOOL ARGS_JSON      one call, then the server's own peak RSS
//! mcp_bench burst GITWARD N TOOL ARGS_JSON  N calls at once on one connection: time to the
//!     last answer, most git children at once, the server's peak RSS
//! mcp_bench vs GITWARD ROUNDS TOOL ARGS_JSON git ARG...
//!     one warm server; each round times one call and one direct git run, alternating
//!     which goes first, so both see the same machine load
//! mcp_bench ab GITWARD_A GITWARD_B ROUNDS TOOL ARGS_JSON git ARG...
//!     two warm servers (a before and an after build) and direct git, one of each per
//!     round in a rotating order, so all three see the same load: each one's median, and
//!     each server's own cost per call (median per-round difference to git)
//! mcp_bench vs GITWARD ROUNDS TOOL ARGS_JSON replay REPO ONTO PAIRS_FILE
//!     as above, the git side being the `git merge-tree --write-tree` sequence of a
//!     rebase: PAIRS_FILE holds "COMMIT PARENT" lines, oldest first, each merge building
//!     on the tree of the previous one, written into a fresh object directory per round
//! ```
//!
//! `vs` prints one line: medians, min–max, the ratio of the medians and the spread of
//! the per-round ratios, the median per-round difference (the server's own cost per call),
//! and the median round trip of a `ping` sent in each round (the transport's share of it).

// A benchmark driver stops at the first failure, with its location.
#![allow(clippy::unwrap_used)]
// A benchmark driver starts the server and prints its figures.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "mcp_bench/direct.rs"]
mod direct;
use direct::Direct;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["calls", bin, n, tool, json] => calls(bin, n.parse().unwrap_or(1), tool, json),
        ["latency", bin, n, tool, json] => latency(bin, n.parse().unwrap_or(100), tool, json),
        ["startup", bin, runs] => startup(bin, runs.parse().unwrap_or(100)),
        ["peak", bin, tool, json] => peak(bin, tool, json),
        ["burst", bin, n, tool, json] => burst(bin, n.parse().unwrap_or(1000), tool, json),
        ["vs", bin, rounds, tool, json, "git", git_args @ ..] => vs(
            bin,
            rounds.parse().unwrap_or(20),
            tool,
            json,
            &Direct::Git(git_args.iter().map(|a| a.to_string()).collect()),
        ),
        ["ab", a, b, rounds, tool, json, "git", git_args @ ..] => ab(
            [a, b],
            rounds.parse().unwrap_or(20),
            tool,
            json,
            &Direct::Git(git_args.iter().map(|a| a.to_string()).collect()),
        ),
        ["vs", bin, rounds, tool, json, "replay", repo, onto, pairs] => {
            Direct::replay(repo, onto, pairs)
                .and_then(|direct| vs(bin, rounds.parse().unwrap_or(20), tool, json, &direct))
        }
        _ => Err("usage: mcp_bench calls GITWARD N TOOL ARGS_JSON | ab GITWARD_A GITWARD_B ROUNDS TOOL ARGS_JSON git ARG... | latency GITWARD N TOOL ARGS_JSON | startup GITWARD RUNS | peak GITWARD TOOL ARGS_JSON | burst GITWARD N TOOL ARGS_JSON | vs GITWARD ROUNDS TOOL ARGS_JSON (git ARG... | replay REPO ONTO PAIRS_FILE)".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("mcp_bench: {why}");
            ExitCode::FAILURE
        }
    }
}

struct Peer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Peer {
    fn start(bin: &str) -> Result<Peer, String> {
        Peer::command(&mut Command::new(bin))
    }

    fn command(command: &mut Command) -> Result<Peer, String> {
        let bin = format!("{:?}", command.get_program());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {bin}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Peer {
            child,
            stdin,
            stdout,
        })
    }

    fn ask(&mut self, message: &Value) -> Result<Value, String> {
        parse(&self.exchange(&line_of(message))?)
    }

    /// Writes one request line and reads its answer line: all a timed call covers. Building
    /// the request and parsing the answer are the client's work, done outside the clock.
    fn exchange(&mut self, line: &str) -> Result<String, String> {
        self.stdin
            .write_all(line.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut reply = String::new();
        if self
            .stdout
            .read_line(&mut reply)
            .map_err(|e| e.to_string())?
            == 0
        {
            return Err("server closed stdout".into());
        }
        Ok(reply)
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn line_of(message: &Value) -> String {
    let mut line = message.to_string();
    line.push('\n');
    line
}

fn parse(reply: &str) -> Result<Value, String> {
    serde_json::from_str(reply).map_err(|e| format!("{e}: {reply}"))
}

fn tool_call(id: u32, tool: &str, arguments: &Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "_meta": meta(), "name": tool, "arguments": arguments },
    })
}

fn vs(bin: &str, rounds: u32, tool: &str, args: &str, direct: &Direct) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(args).map_err(|e| e.to_string())?;
    let mut peer = Peer::start(bin)?;
    peer.ask(&json!({ "jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": { "_meta": meta() } }))?;
    let mut id = 0;
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut pings = Vec::new();
    // Two unmeasured rounds warm the page cache and the server.
    for round in 0..rounds + 2 {
        let mut time_call = || -> Result<Duration, String> {
            id += 1;
            let line = line_of(&tool_call(id, tool, &arguments));
            let started = Instant::now();
            let reply = peer.exchange(&line)?;
            let took = started.elapsed();
            let reply = parse(&reply)?;
            if reply["result"]["isError"] != json!(false) {
                return Err(format!("{tool} failed: {reply}"));
            }
            Ok(took)
        };
        let time_git = || -> Result<Duration, String> {
            let started = Instant::now();
            direct.run()?;
            Ok(started.elapsed())
        };
        let (a, b) = if round % 2 == 0 {
            let a = time_call()?;
            (a, time_git()?)
        } else {
            let b = time_git()?;
            (time_call()?, b)
        };
        // A `ping` in the same round: reading a request and writing its answer, with no
        // tool, no git and no ledger, is the floor under every call's own cost.
        id += 1;
        let line = line_of(&json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }));
        let started = Instant::now();
        let pong = peer.exchange(&line)?;
        let ping = started.elapsed();
        let pong = parse(&pong)?;
        if pong.get("result").is_none() {
            return Err(format!("ping failed: {pong}"));
        }
        if round >= 2 {
            ours.push(a);
            theirs.push(b);
            pings.push(ping);
        }
    }
    peer.stop();
    pings.sort();
    let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
    let mut ratios: Vec<f64> = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| ms(a) / ms(b))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let median = |v: &[Duration]| ms(&v[v.len() / 2]);
    // The server's own part of a call (reading the request, starting git, parsing its
    // output, writing the answer), as the median of the per-round differences: the git
    // run it makes costs about what the direct one does. Of that, the ping's round trip is
    // the transport's part (read, parse, write); the rest is the call's (spawn, parse git's
    // output, serialize, audit).
    let mut extra: Vec<f64> = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| ms(a) - ms(b))
        .collect();
    extra.sort_by(f64::total_cmp);
    ours.sort();
    theirs.sort();
    println!(
        "{tool:<22} gitward {:8.2} ms ({:.2}–{:.2})   git {:8.2} ms ({:.2}–{:.2})   ratio {:.2}x (per round {:.2}–{:.2}, {rounds} rounds)   server's own {:.2} ms per call (ping round trip {:.2} ms)",
        median(&ours),
        ms(&ours[0]),
        ms(&ours[ours.len() - 1]),
        median(&theirs),
        ms(&theirs[0]),
        ms(&theirs[theirs.len() - 1]),
        median(&ours) / median(&theirs),
        ratios[0],
        ratios[ratios.len() - 1],
        extra[extra.len() / 2],
        median(&pings),
    );
    Ok(())
}

fn ab(bins: [&str; 2], rounds: u32, tool: &str, args: &str, direct: &Direct) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(args).map_err(|e| e.to_string())?;
    let mut peers = Vec::new();
    for bin in bins {
        let mut peer = Peer::start(bin)?;
        peer.ask(&json!({ "jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": { "_meta": meta() } }))?;
        peers.push(peer);
    }
    // times[0], times[1]: the two servers; times[2]: direct git.
    let mut times: [Vec<f64>; 3] = Default::default();
    for round in 0..rounds + 2 {
        let id = round + 1;
        let mut took = [0.0; 3];
        for k in 0..3 {
            let who = (k + round as usize) % 3;
            let line = line_of(&tool_call(id, tool, &arguments));
            let started = Instant::now();
            let reply = match who {
                2 => direct.run().map(|()| None)?,
                _ => Some(peers[who].exchange(&line)?),
            };
            took[who] = started.elapsed().as_secs_f64() * 1000.0;
            if let Some(reply) = reply.as_deref().map(parse).transpose()?
                && reply["result"]["isError"] != json!(false)
            {
                return Err(format!("{tool} failed: {reply}"));
            }
        }
        if round >= 2 {
            for (all, t) in times.iter_mut().zip(took) {
                all.push(t);
            }
        }
    }
    for peer in peers {
        peer.stop();
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let git = median(&times[2]);
    for (name, t) in ["A", "B"].iter().zip(&times[..2]) {
        let own: Vec<f64> = t.iter().zip(&times[2]).map(|(a, b)| a - b).collect();
        println!(
            "{tool:<22} {name} {:8.2} ms   git {git:8.2} ms   ratio {:.2}x   server's own {:.2} ms per call ({rounds} rounds)",
            median(t),
            median(t) / git,
            median(&own),
        );
    }
    Ok(())
}

fn calls(bin: &str, n: u32, tool: &str, args: &str) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(args).map_err(|e| e.to_string())?;
    let mut peer = Peer::start(bin)?;
    peer.ask(&json!({ "jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": { "_meta": meta() } }))?;
    for id in 1..=n {
        let reply = peer.ask(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "_meta": meta(), "name": tool, "arguments": arguments },
        }))?;
        if reply["result"]["isError"] != json!(false) {
            return Err(format!("{tool} failed: {reply}"));
        }
    }
    peer.stop();
    Ok(())
}

fn latency(bin: &str, n: u32, tool: &str, args: &str) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(args).map_err(|e| e.to_string())?;
    let mut peer = Peer::start(bin)?;
    peer.ask(&json!({ "jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": { "_meta": meta() } }))?;
    let mut times = Vec::with_capacity(n as usize);
    // An untimed pause between calls (MCP_BENCH_GAP_MS), so work a call starts after its
    // answer (a gateway's card preview) is not charged to the next call.
    let gap = std::env::var("MCP_BENCH_GAP_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis);
    for id in 1..=n {
        if let Some(gap) = gap.filter(|_| id > 1) {
            std::thread::sleep(gap);
        }
        let started = Instant::now();
        let reply = peer.ask(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "_meta": meta(), "name": tool, "arguments": arguments },
        }))?;
        times.push(started.elapsed());
        if reply["result"]["isError"] != json!(false) {
            return Err(format!("{tool} failed: {reply}"));
        }
    }
    peer.stop();
    report(&format!("{tool} ({n} calls)"), times);
    Ok(())
}

/// Process start to answered `initialize`, side by side with `head -1` answering the same
/// line the same way (started, sent the line, its echo read back): whatever gitward takes
/// beyond that is its own start work. Interleaved, the order alternating every round.
fn startup(bin: &str, runs: u32) -> Result<(), String> {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "mcp_bench", "version": "1" } },
    });
    let mut times: Vec<Duration> = Vec::new();
    let mut floor = Vec::new();
    let gitward = |times: &mut Vec<Duration>| -> Result<(), String> {
        let started = Instant::now();
        let mut peer = Peer::start(bin)?;
        let reply = peer.ask(&init)?;
        times.push(started.elapsed());
        if reply["result"]["protocolVersion"].is_null() {
            return Err(format!("bad initialize reply: {reply}"));
        }
        peer.stop();
        Ok(())
    };
    let head = |floor: &mut Vec<Duration>| -> Result<(), String> {
        let started = Instant::now();
        let mut peer = Peer::command(Command::new("head").arg("-1"))?;
        peer.ask(&init)?;
        floor.push(started.elapsed());
        peer.stop();
        Ok(())
    };
    for round in 0..runs {
        if round % 2 == 0 {
            gitward(&mut times)?;
            head(&mut floor)?;
        } else {
            head(&mut floor)?;
            gitward(&mut times)?;
        }
    }
    let median = |t: &mut Vec<Duration>| {
        t.sort();
        t[t.len() / 2].as_secs_f64() * 1000.0
    };
    let gap = median(&mut times) - median(&mut floor);
    report(
        &format!("start to answered initialize ({runs} runs)"),
        times,
    );
    report(
        &format!("head -1 answering the same line ({runs} runs, interleaved)"),
        floor,
    );
    println!("gitward's own start work: {gap:.2} ms (difference of the medians)");
    Ok(())
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| ms(times[((times.len() - 1) as f64 * q).round() as usize]);
    let mean = times.iter().map(|d| ms(*d)).sum::<f64>() / times.len() as f64;
    println!(
        "{what}: min {:.2} ms, median {:.2} ms, p95 {:.2} ms, mean {:.2} ms",
        at(0.0),
        at(0.5),
        at(0.95),
        mean
    );
}

/// Children of `parent` named `git`, from `/proc`.
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

/// N calls sent at once on one connection, then read: the time until the last answer,
/// the most git children seen at once, and the server's peak RSS.
fn burst(bin: &str, n: u32, tool: &str, args: &str) -> Result<(), String> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let arguments: Value = serde_json::from_str(args).map_err(|e| e.to_string())?;
    let mut peer = Peer::start(bin)?;
    let pid = peer.child.id();
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
    let mut burst = Vec::new();
    for id in 1..=n {
        burst.extend(tool_call(id, tool, &arguments).to_string().into_bytes());
        burst.push(b'\n');
    }
    let started = Instant::now();
    let mut stdin = peer.stdin;
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&burst);
        stdin
    });
    let mut errors = 0;
    for _ in 0..n {
        let mut line = String::new();
        if peer
            .stdout
            .read_line(&mut line)
            .map_err(|e| e.to_string())?
            == 0
        {
            return Err("server closed stdout".into());
        }
        let reply: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
        if reply["result"]["isError"] != json!(false) {
            errors += 1;
        }
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
        "{n} concurrent {tool}: all answered in {:.2} s ({errors} errors), at most {} git \
         children at once, server peak RSS {hwm}",
        elapsed.as_secs_f64(),
        most.load(Ordering::Relaxed),
    );
    peer.stdin = writer.join().map_err(|_| "writer panicked")?;
    peer.stop();
    Ok(())
}

/// The server's own high-water mark (`VmHWM`), which, unlike a wait-time figure, leaves
/// out the git processes it ran.
fn peak(bin: &str, tool: &str, args: &str) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(args).map_err(|e| e.to_string())?;
    let mut peer = Peer::start(bin)?;
    let started = Instant::now();
    let reply = peer.ask(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "_meta": meta(), "name": tool, "arguments": arguments },
    }))?;
    let elapsed = started.elapsed();
    let status = std::fs::read_to_string(format!("/proc/{}/status", peer.child.id()))
        .map_err(|e| e.to_string())?;
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_default();
    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
    let data = &reply["result"]["structuredContent"]["data"];
    println!(
        "{tool}: server peak RSS {hwm}, {:.1} s, isError {}, {} bytes of result, totalBytes {} (exact {})",
        elapsed.as_secs_f64(),
        reply["result"]["isError"],
        text.len(),
        data["totalBytes"],
        data["totalBytesExact"],
    );
    peer.stop();
    Ok(())
}
