//! A scripted HTTP peer on loopback standing in for an approval gateway that misbehaves:
//! each connection gets the next scripted reply, and every request is handed back to the
//! test. It speaks just enough HTTP/1.1 for one request per connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// What the peer does with one connection.
#[derive(Clone)]
pub enum Reply {
    /// A JSON answer with this status.
    Json(u16, Value),
    /// A status, a content type and a body, as given.
    Typed(u16, &'static str, String),
    /// These bytes and a close: not HTTP at all.
    Raw(&'static [u8]),
    /// Reads the request, then says nothing for this long before closing.
    Silent(Duration),
}

/// One request as the peer received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header lines, lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Peer {
    /// `127.0.0.1:PORT`, for `FLUXGIT_MCP_HANDSHAKE_ADDR`.
    pub addr: String,
    seen: mpsc::Receiver<Request>,
}

impl Peer {
    /// Serves `replies` in order, one per connection, then stops listening.
    pub fn start(replies: Vec<Reply>) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (tx, seen) = mpsc::channel();
        std::thread::spawn(move || {
            for reply in replies {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                let tx = tx.clone();
                std::thread::spawn(move || serve(stream, &reply, &tx));
            }
        });
        Peer { addr, seen }
    }

    /// An address where nothing listens.
    pub fn closed_addr() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().to_string()
    }

    /// The requests received so far, waiting a little for ones still arriving.
    pub fn requests(&self) -> Vec<Request> {
        let mut out = Vec::new();
        while let Ok(r) = self.seen.recv_timeout(Duration::from_millis(200)) {
            out.push(r);
        }
        out
    }

    /// The env pair that points gitward at this peer.
    pub fn env(&self) -> [(&'static str, &str); 1] {
        [("FLUXGIT_MCP_HANDSHAKE_ADDR", self.addr.as_str())]
    }
}

fn serve(stream: TcpStream, reply: &Reply, tx: &mpsc::Sender<Request>) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    let _ = tx.send(request);
    let mut stream = stream;
    let (status, content_type, body) = match reply {
        Reply::Json(status, body) => (*status, "application/json", body.to_string()),
        Reply::Typed(status, content_type, body) => (*status, *content_type, body.clone()),
        Reply::Raw(bytes) => {
            let _ = stream.write_all(bytes);
            return;
        }
        Reply::Silent(quiet) => {
            std::thread::sleep(*quiet);
            return;
        }
    };
    // The client may hang up early (a capped body); that is not the test's concern.
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let mut parts = first.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
