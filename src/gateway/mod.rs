//! The FluxGit gateway: where it is ([`addr`]), the read-only bridge calls that
//! enrich hybrid tools when it answers ([`http`]), the write handshake's wire types
//! shared by both sides ([`api`]), the sidecar's typed client of that handshake
//! ([`client`]), where a proposal's card is on the approval page ([`page`]) and the
//! gateway's own core ([`server`]).

pub mod addr;
pub mod api;
pub mod client;
pub mod http;
pub mod page;
pub mod server;
