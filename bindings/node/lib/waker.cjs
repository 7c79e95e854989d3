'use strict';
// waker.cjs: the event-loop waker: poll(2) on a registry's wake fd, on libuv's pool.

const { koffi, api } = require('./native.cjs');
const { check } = require('./errors.cjs');
const { keys } = require('./keys.cjs');

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

// --- driving a registry from the event loop ---------------------------------

// Runs queued main-thread calls, hands results over, and re-arms the waker
// while any batch is pending.
function drive(registry) {
  registry._driveScheduled = false;
  if (registry._ptr === null) return;
  for (let i = 0; i < 64; i++) {
    if (Number(api.registry_pump(registry._ptr, 2)) === 0) break;
  }
  for (const batch of [...registry._batches]) batch._poll();
  let hostOthers = false;
  for (const run of [...registry._hostRuns]) {
    run.poll();
    if (!run.done && run.others) hostOthers = true;
  }
  if (registry._batches.size || hostOthers || registry._streams.size || registry._turns || registry._servers.size || registry._servingStdio) arm(registry);
}

function arm(registry) {
  if (registry._armed || registry._ptr === null) return;
  registry._armed = true;
  if (waker === null || keys.finishing > 0) {
    setTimeout(() => {
      registry._armed = false;
      drive(registry);
    }, 2);
    return;
  }
  if (registry._wakeFd === null) {
    const fd = [0];
    check(api.registry_wake_fd(registry._ptr, fd));
    registry._wakeFd = fd[0];
    registry._pollfd = Buffer.alloc(8);
    registry._pollfd.writeInt32LE(registry._wakeFd, 0);
    registry._pollfd.writeInt16LE(POLLIN, 4);
  }
  const pollfd = registry._pollfd;
  waker.poll.async(pollfd, 1, WAKE_POLL_MS, () => {
    registry._armed = false;
    if (registry._ptr === null) return;
    // Reset the fd (non-blocking: an eventfd, or a pipe read until empty).
    const buf = Buffer.alloc(64);
    for (let i = 0; i < 16 && Number(waker.read(registry._wakeFd, buf, buf.length)) > 0; i++);
    drive(registry);
  });
}

module.exports = { waker, POLLIN, WAKE_POLL_MS, drive, arm };
