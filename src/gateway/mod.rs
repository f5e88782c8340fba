//! The FluxGit gateway: where it is ([`addr`]) and the read-only bridge calls that
//! enrich hybrid tools when it answers ([`http`]).

pub mod addr;
pub mod http;
