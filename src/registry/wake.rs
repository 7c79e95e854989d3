//! How an event-loop host learns that work is waiting for it (a polled
//! result, a main-thread call): a callback and, on Linux, an eventfd.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

#[cfg(target_os = "linux")]
use crate::error::Error;

#[derive(Default)]
pub(crate) struct Wake {
    pub(super) callback: RwLock<Option<Arc<dyn Fn() + Send + Sync>>>,
    pub(super) armed: AtomicBool,
    #[cfg(target_os = "linux")]
    fd: std::sync::OnceLock<i32>,
}

impl Wake {
    pub(crate) fn signal(&self) {
        if !self.armed.load(Ordering::Acquire) {
            return;
        }
        let callback = self.callback.read().ok().and_then(|c| c.clone());
        if let Some(f) = callback {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f()));
        }
        #[cfg(target_os = "linux")]
        if let Some(fd) = self.fd.get() {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to our own eventfd.
            unsafe { libc::write(*fd, (&one as *const u64).cast(), 8) };
        }
    }

    /// The eventfd, made on first use (see `Registry::wake_fd`).
    #[cfg(target_os = "linux")]
    pub(super) fn fd(&self) -> Result<i32, Error> {
        if let Some(fd) = self.fd.get() {
            return Ok(*fd);
        }
        // SAFETY: plain syscall; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::Internal(format!(
                "eventfd failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        if self.fd.set(fd).is_err() {
            // SAFETY: we created fd just now and nobody else has it.
            unsafe { libc::close(fd) };
        }
        self.armed.store(true, Ordering::Release);
        self.fd
            .get()
            .copied()
            .ok_or_else(|| Error::Internal("eventfd lost".into()))
    }
}

impl Drop for Wake {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = self.fd.get() {
            // SAFETY: the fd is ours and closed once, here.
            unsafe { libc::close(*fd) };
        }
    }
}
