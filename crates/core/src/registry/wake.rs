//! How an event-loop host learns that work is waiting for it (a polled
//! result, a main-thread call): a callback and an OS object its loop can wait
//! on: an eventfd on Linux and Android, the read end of a pipe on the other
//! Unix systems (macOS, iOS, the BSDs), an auto-reset event on Windows.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use crate::error::Error;

#[derive(Default)]
pub(crate) struct Wake {
    pub(super) callback: RwLock<Option<Arc<dyn Fn() + Send + Sync>>>,
    pub(super) armed: AtomicBool,
    /// Made on first request (`Registry::wake_fd` / `wake_handle`).
    os: OnceLock<os::Signal>,
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
        if let Some(signal) = self.os.get() {
            signal.raise();
        }
    }

    /// The OS object, made on first use; from then on every `signal` raises it.
    fn os(&self) -> Result<&os::Signal, Error> {
        if self.os.get().is_none() {
            let made = os::Signal::new().map_err(|e| {
                Error::Internal(format!("cannot make the wake-up {}: {e}", os::WHAT))
            })?;
            // A racing first call may have won: ours is then dropped (closed).
            let _ = self.os.set(made);
        }
        self.armed.store(true, Ordering::Release);
        self.os
            .get()
            .ok_or_else(|| Error::Internal(format!("wake-up {} lost", os::WHAT)))
    }

    /// The file descriptor the host polls (see `Registry::wake_fd`).
    #[cfg(unix)]
    pub(super) fn fd(&self) -> Result<i32, Error> {
        Ok(self.os()?.raw())
    }

    /// The event HANDLE the host waits on (see `Registry::wake_handle`).
    #[cfg(windows)]
    pub(super) fn handle(&self) -> Result<*mut std::ffi::c_void, Error> {
        Ok(self.os()?.raw())
    }
}

/// Linux and Android: one eventfd. A raise adds 1 to its counter; one 8-byte
/// read returns the count and resets it.
#[cfg(any(target_os = "linux", target_os = "android"))]
mod os {
    pub(super) const WHAT: &str = "eventfd";

    pub(super) struct Signal {
        fd: i32,
    }

    impl Signal {
        pub(super) fn new() -> std::io::Result<Signal> {
            // SAFETY: plain syscall; the result is checked.
            let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Signal { fd })
        }

        pub(super) fn raise(&self) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to our own eventfd. It
            // fails only when the counter is near overflow: still readable.
            unsafe { libc::write(self.fd, (&one as *const u64).cast(), 8) };
        }

        pub(super) fn raw(&self) -> i32 {
            self.fd
        }
    }

    impl Drop for Signal {
        fn drop(&mut self) {
            // SAFETY: the fd is ours and closed once, here.
            unsafe { libc::close(self.fd) };
        }
    }
}

/// The other Unix systems (macOS, iOS, the BSDs): no eventfd, so a pipe,
/// both ends non-blocking and close-on-exec (set with fcntl: macOS has no
/// pipe2). A raise writes one byte; when the pipe is full, a raise is
/// dropped, and the read end is readable anyway. The host reads until the
/// read fails with EAGAIN.
#[cfg(unix)]
#[cfg_attr(any(target_os = "linux", target_os = "android"), allow(dead_code))]
pub(crate) mod pipe {
    pub(crate) struct Signal {
        pub(super) read: i32,
        pub(super) write: i32,
    }

    fn set_flags(fd: i32) -> std::io::Result<()> {
        // SAFETY: fcntl on an fd we just made; results checked.
        unsafe {
            let status = libc::fcntl(fd, libc::F_GETFL);
            let fd_flags = libc::fcntl(fd, libc::F_GETFD);
            if status < 0
                || fd_flags < 0
                || libc::fcntl(fd, libc::F_SETFL, status | libc::O_NONBLOCK) < 0
                || libc::fcntl(fd, libc::F_SETFD, fd_flags | libc::FD_CLOEXEC) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    impl Signal {
        pub(crate) fn new() -> std::io::Result<Signal> {
            let mut fds = [0i32; 2];
            // SAFETY: pipe writes two fds into a live 2-element array.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Owned from here on: dropped (closed) if the flags fail.
            let signal = Signal {
                read: fds[0],
                write: fds[1],
            };
            set_flags(signal.read)?;
            set_flags(signal.write)?;
            Ok(signal)
        }

        pub(crate) fn raise(&self) {
            let byte = 1u8;
            // SAFETY: writes one byte from a live u8 to our own pipe; a full
            // pipe (EAGAIN) is already readable, so the failure is ignored.
            unsafe { libc::write(self.write, (&byte as *const u8).cast(), 1) };
        }

        pub(crate) fn raw(&self) -> i32 {
            self.read
        }
    }

    impl Drop for Signal {
        fn drop(&mut self) {
            // SAFETY: both fds are ours and closed once, here.
            unsafe {
                libc::close(self.read);
                libc::close(self.write);
            }
        }
    }
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
mod os {
    pub(super) const WHAT: &str = "pipe";
    pub(super) use super::pipe::Signal;
}

/// Windows: an auto-reset event, made with kernel32 directly (no new
/// dependency). A raise sets it; the wait that returns it resets it.
#[cfg(windows)]
mod os {
    use std::ffi::c_void;

    pub(super) const WHAT: &str = "event";

    #[link(name = "kernel32")]
    extern "system" {
        fn CreateEventW(
            attributes: *mut c_void,
            manual_reset: i32,
            initial_state: i32,
            name: *const u16,
        ) -> *mut c_void;
        fn SetEvent(event: *mut c_void) -> i32;
        fn CloseHandle(object: *mut c_void) -> i32;
    }

    /// The HANDLE, kept as an address: the event may be set from any thread.
    pub(super) struct Signal {
        handle: usize,
    }

    impl Signal {
        pub(super) fn new() -> std::io::Result<Signal> {
            // SAFETY: no attributes, no name: an unnamed auto-reset event,
            // initially not set. The result is checked.
            let handle = unsafe { CreateEventW(std::ptr::null_mut(), 0, 0, std::ptr::null()) };
            if handle.is_null() {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Signal {
                handle: handle as usize,
            })
        }

        pub(super) fn raise(&self) {
            // SAFETY: our own live event handle.
            unsafe { SetEvent(self.raw()) };
        }

        pub(super) fn raw(&self) -> *mut c_void {
            self.handle as *mut c_void
        }
    }

    impl Drop for Signal {
        fn drop(&mut self) {
            // SAFETY: the handle is ours and closed once, here.
            unsafe { CloseHandle(self.raw()) };
        }
    }
}

/// Elsewhere (e.g. WebAssembly): no OS object; the callback is all there is.
#[cfg(not(any(unix, windows)))]
mod os {
    pub(super) const WHAT: &str = "object";

    pub(super) struct Signal;

    impl Signal {
        pub(super) fn new() -> std::io::Result<Signal> {
            Err(std::io::ErrorKind::Unsupported.into())
        }

        pub(super) fn raise(&self) {}
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::pipe::Signal;

    fn read_some(fd: i32) -> isize {
        let mut buf = [0u8; 64];
        // SAFETY: reads at most 64 bytes into a live 64-byte buffer.
        unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }
    }

    // The pipe is what macOS, iOS and the BSDs get; it is built and tested on
    // Linux too, so its rules are pinned where the tests run.
    #[test]
    fn the_pipe_is_readable_after_a_raise_until_drained_and_never_blocks() {
        let signal = Signal::new().unwrap();
        let fd = signal.raw();
        // SAFETY: fcntl on fds the signal owns and keeps open.
        for end in [signal.read, signal.write] {
            let (status, fd_flags) = unsafe {
                (
                    libc::fcntl(end, libc::F_GETFL),
                    libc::fcntl(end, libc::F_GETFD),
                )
            };
            assert_ne!(status & libc::O_NONBLOCK, 0, "non-blocking");
            assert_ne!(fd_flags & libc::FD_CLOEXEC, 0, "close-on-exec");
        }
        assert_eq!(read_some(fd), -1, "nothing raised: a read returns at once");
        signal.raise();
        signal.raise();
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&mut pfd, 1, 1000) }, 1);
        assert_eq!(read_some(fd), 2);
        assert_eq!(read_some(fd), -1, "drained");
        // A raise into a full pipe neither blocks nor fails: still readable.
        for _ in 0..200_000 {
            signal.raise();
        }
        assert!(read_some(fd) > 0);
    }
}
