//! The gateway address policy: plain HTTP to a loopback host with an explicit port.
//!
//! Accepted: `127.0.0.1:P`, `[::1]:P` and `localhost:P` (P in 1–65535), optionally
//! prefixed with `http://` and followed by one `/`. Everything else — another host,
//! credentials, a path, a query, a fragment, `https://`, a missing port — is refused,
//! so nothing a tool sends can leave the machine or be read by a proxy.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A checked gateway address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayAddr {
    /// The host as written (`127.0.0.1`, `[::1]` or `localhost`), for the Host header.
    pub host: String,
    pub port: u16,
}

impl GatewayAddr {
    /// Parses a configured value, or says why it is refused.
    pub fn parse(value: &str) -> Result<GatewayAddr, &'static str> {
        if value.chars().any(char::is_control) {
            return Err("control characters");
        }
        let value = value.trim();
        if value.is_empty() {
            return Err("empty");
        }
        let rest = match value.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some(_) => return Err("only plain http:// is accepted"),
            None => value,
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('@') {
            return Err("credentials are not accepted");
        }
        if rest.contains(['/', '?', '#', '\\']) {
            return Err("a path, query or fragment is not accepted");
        }
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (inner, after) = v6.split_once(']').ok_or("unclosed IPv6 bracket")?;
            let port = after
                .strip_prefix(':')
                .ok_or("an explicit port is required")?;
            if inner != "::1" {
                return Err("the host must be loopback (127.0.0.1, [::1] or localhost)");
            }
            ("[::1]", port)
        } else {
            let (host, port) = rest
                .rsplit_once(':')
                .ok_or("an explicit port is required")?;
            if !(host == "127.0.0.1" || host.eq_ignore_ascii_case("localhost")) {
                return Err("the host must be loopback (127.0.0.1, [::1] or localhost)");
            }
            (
                if host == "127.0.0.1" {
                    "127.0.0.1"
                } else {
                    "localhost"
                },
                port,
            )
        };
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.len() > 5 {
            return Err("the port must be a number from 1 to 65535");
        }
        let port: u16 = port
            .parse()
            .ok()
            .filter(|p| *p != 0)
            .ok_or("the port must be a number from 1 to 65535")?;
        Ok(GatewayAddr {
            host: host.to_owned(),
            port,
        })
    }

    /// The socket to connect to; `localhost` means IPv4 loopback, never a DNS answer.
    pub fn socket(&self) -> SocketAddr {
        let ip = if self.host == "[::1]" {
            IpAddr::V6(Ipv6Addr::LOCALHOST)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        };
        SocketAddr::new(ip, self.port)
    }

    /// `http://host:port` plus `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}:{}{}", self.host, self.port, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_with_port_is_accepted() {
        for (value, host, port) in [
            ("127.0.0.1:59647", "127.0.0.1", 59647),
            ("http://127.0.0.1:1/", "127.0.0.1", 1),
            ("HTTP://localhost:65535", "localhost", 65535),
            ("LocalHost:8080", "localhost", 8080),
            ("[::1]:9", "[::1]", 9),
            ("http://[::1]:9/", "[::1]", 9),
            ("  127.0.0.1:80  ", "127.0.0.1", 80),
        ] {
            let addr = GatewayAddr::parse(value).unwrap_or_else(|e| panic!("{value}: {e}"));
            assert_eq!((addr.host.as_str(), addr.port), (host, port), "{value}");
        }
        assert_eq!(
            GatewayAddr::parse("[::1]:9").unwrap().url("/v1/x"),
            "http://[::1]:9/v1/x"
        );
        assert!(
            GatewayAddr::parse("localhost:5")
                .unwrap()
                .socket()
                .ip()
                .is_loopback()
        );
    }

    #[test]
    fn everything_else_is_refused() {
        for value in [
            "",
            "127.0.0.1",
            "127.0.0.1:",
            "127.0.0.1:0",
            "127.0.0.1:65536",
            "127.0.0.1:+80",
            "127.0.0.1:80x",
            "https://127.0.0.1:443",
            "ftp://127.0.0.1:21",
            "http://user:pw@127.0.0.1:80",
            "user@localhost:80",
            "http://127.0.0.1:80/v1",
            "127.0.0.1:80//",
            "127.0.0.1:80?x=1",
            "127.0.0.1:80#f",
            "example.com:80",
            "10.0.0.1:80",
            "0.0.0.0:80",
            "127.0.0.2:80",
            "localhost.example.com:80",
            "[::2]:80",
            "[::1]",
            "[::1:80",
            "::1:80",
            "127.0.0.1:80\n",
            "127.0.0.1:8\u{0}0",
        ] {
            assert!(GatewayAddr::parse(value).is_err(), "{value:?} accepted");
        }
    }
}
