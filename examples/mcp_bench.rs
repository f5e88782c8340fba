//! A small MCP client for `scripts/bench.sh`: it measures gitward the way a host uses it,
//! one long-lived process answering many requests over stdio.
//!
//! ```text
//! mcp_bench calls GITWARD N TOOL ARGS_JSON   start once, then N modern tools/call
//! mcp_bench startup GITWARD RUNS             process start → answered initialize, RUNS times
//! mcp_bench peak GITWARD TOOL ARGS_JSON      one call, then the server's own peak RSS
//! ```

// A benchmark driver starts the server and prints its figures.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["calls", bin, n, tool, json] => calls(bin, n.parse().unwrap_or(1), tool, json),
        ["startup", bin, runs] => startup(bin, runs.parse().unwrap_or(100)),
        ["peak", bin, tool, json] => peak(bin, tool, json),
        _ => Err("usage: mcp_bench calls GITWARD N TOOL ARGS_JSON | startup GITWARD RUNS | peak GITWARD TOOL ARGS_JSON".into()),
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
        let mut child = Command::new(bin)
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
        let mut line = message.to_string();
        line.push('\n');
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
        serde_json::from_str(&reply).map_err(|e| format!("{e}: {reply}"))
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

fn startup(bin: &str, runs: u32) -> Result<(), String> {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "mcp_bench", "version": "1" } },
    });
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let mut peer = Peer::start(bin)?;
        let reply = peer.ask(&init)?;
        times.push(started.elapsed());
        if reply["result"]["protocolVersion"].is_null() {
            return Err(format!("bad initialize reply: {reply}"));
        }
        peer.stop();
    }
    report(
        &format!("start to answered initialize ({runs} runs)"),
        times,
    );
    // The floor on this machine: starting a process that does nothing.
    let mut floor = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        Command::new("true")
            .status()
            .map_err(|e| format!("cannot start true: {e}"))?;
        floor.push(started.elapsed());
    }
    report(&format!("start and exit of `true` ({runs} runs)"), floor);
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
    println!(
        "{tool}: server peak RSS {hwm}, {:.1} s, isError {}, {} bytes of result",
        elapsed.as_secs_f64(),
        reply["result"]["isError"],
        text.len()
    );
    peer.stop();
    Ok(())
}
