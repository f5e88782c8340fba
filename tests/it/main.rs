//! Integration tests: the real `gitward` binary over stdio, against repositories built
//! with real git in temporary directories. One test binary, one module per tool family.

// Tests start git and gitward directly; the product code may not.
#![allow(clippy::disallowed_methods)]

mod common;

mod interop;
mod protocol;
mod repo_status;
