//! The FluxGit gateway: where it is ([`addr`]), the read-only bridge calls that
//! enrich hybrid tools when it answers ([`http`]), and the write handshake's wire types
//! shared by both sides ([`api`]).

pub mod addr;
pub mod api;
pub mod http;
