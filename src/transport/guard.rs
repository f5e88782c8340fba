//! Keeping one request from hurting the others: a tool runs as a task of its own, so a
//! panic ends that call alone, and a connection has a bound on the requests it keeps in
//! progress, so a client cannot make the server hold unbounded memory.

use std::sync::Arc;

/// A spawned task that is aborted when its awaiting future is dropped.
pub struct AbortOnDrop<T>(pub tokio::task::JoinHandle<T>);

impl<T> std::future::Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Development builds only: `GITWARD_DEBUG_PANIC_TOOL=<tool name>` makes that tool panic
/// when called, so tests can prove a panicking call is answered and audited. Release
/// builds contain none of this.
pub mod debug_panic {
    use crate::config::Config;

    #[cfg(debug_assertions)]
    pub fn maybe_panic(config: &Config, tool: &str) {
        if config.debug_panic_tool.as_deref() == Some(tool) {
            panic!(
                "{} asked {tool} to panic",
                crate::config::vars::DEBUG_PANIC_TOOL
            );
        }
    }

    #[cfg(not(debug_assertions))]
    pub fn maybe_panic(_: &Config, _: &str) {}
}

/// At most this many requests of one connection are worked on at once…
const MAX_INFLIGHT: u32 = 1024;
/// …holding at most this many KiB of request frames between them.
const MAX_INFLIGHT_KIB: u32 = 64 * 1024;

/// The bound on one connection's requests in progress, by count and by size.
pub struct Inflight {
    count: Arc<tokio::sync::Semaphore>,
    kib: Arc<tokio::sync::Semaphore>,
}

impl Inflight {
    pub fn new() -> Inflight {
        Inflight {
            count: Arc::new(tokio::sync::Semaphore::new(MAX_INFLIGHT as usize)),
            kib: Arc::new(tokio::sync::Semaphore::new(MAX_INFLIGHT_KIB as usize)),
        }
    }

    /// Waits until a request of `bytes` fits; the permits are its place, held to its end.
    pub async fn admit(
        &self,
        bytes: usize,
    ) -> Option<(
        tokio::sync::OwnedSemaphorePermit,
        tokio::sync::OwnedSemaphorePermit,
    )> {
        let kib = u32::try_from(bytes / 1024 + 1)
            .unwrap_or(u32::MAX)
            .min(MAX_INFLIGHT_KIB);
        let count = Arc::clone(&self.count).acquire_owned().await.ok()?;
        let kib = Arc::clone(&self.kib).acquire_many_owned(kib).await.ok()?;
        Some((count, kib))
    }
}
