//! The FluxGit gateway: where it is ([`addr`]), the read-only bridge calls that
//! enrich hybrid tools when it answers ([`http`]), the write handshake's wire types
//! shared by both sides ([`api`]) and the gateway's own core ([`server`]).

pub mod addr;
pub mod api;
pub mod http;
pub mod server;
