'use strict';
// waker.cjs: the event-loop waker: poll(2) on a registry's wake fd, on libuv's pool.

const { koffi } = require('./native.cjs');

// --- the event-loop waker ---------------------------------------------------

// poll(2) and read(2) from the C library, for watching wake fds on libuv's
// pool. null where there is none (Windows): batches are then driven by a
// 2 ms timer while pending.
const waker = (() => {
  if (process.platform === 'win32') return null;
  const names = process.platform === 'darwin' ? ['libc.dylib', '/usr/lib/libSystem.B.dylib'] : ['libc.so.6', 'libc.so'];
  for (const name of names) {
    try {
      const libc = koffi.load(name);
      return {
        poll: libc.func('int poll(void *fds, unsigned long nfds, int timeout)'),
        read: libc.func('intptr_t read(int fd, _Out_ uint8_t *buf, size_t count)'),
      };
    } catch {
      // next
    }
  }
  return null;
})();
const POLLIN = 1;
const WAKE_POLL_MS = 100;

module.exports = { waker, POLLIN, WAKE_POLL_MS };
