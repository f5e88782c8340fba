//! Single-commit read tools, one file each.

pub mod details;
