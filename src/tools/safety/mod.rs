//! The safety timeline: restore points merged with HEAD's reflog, read from the approval
//! gateway (see `tools::flux` for the shared bridge).

pub mod event_details;
pub mod timeline;
