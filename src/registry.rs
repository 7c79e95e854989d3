//! Tools by name: register, replace, remove, look up, describe.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use crate::error::Error;
use crate::exec::{Approver, Call};
use crate::observe::{EventHook, Observer, ToolStats};
use crate::schema::{Prepared, Schema};
use crate::suggest::NameIndex;
use crate::tool::{ToolFlags, ToolSpec};

/// What runs a tool. A C host's callback, a Rust closure, a binding's trampoline.
///
/// `invoke` must complete the call exactly once, now or later, from any thread
/// (`Call::complete`, `Call::fail`). Dropping the handler is the tool's
/// "destroy": it happens once, after the tool is gone and its calls are done.
pub trait Handler: Send + Sync + 'static {
    fn invoke(&self, call: Call);
}

impl<F> Handler for F
where
    F: Fn(Call) + Send + Sync + 'static,
{
    fn invoke(&self, call: Call) {
        self(call)
    }
}

/// Everything needed to register a tool.
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
    pub handler: Box<dyn Handler>,
    pub timeout_ms: u32,
    pub max_output_chars: u32,
    pub flags: ToolFlags,
}

/// Host code a registry has under way: tool callbacks running and tools not
/// yet destroyed. `close` waits for both to reach zero.
pub(crate) struct Activity {
    running: AtomicUsize,
    tools: AtomicUsize,
    closed: AtomicBool,
    lock: Mutex<()>,
    idle: Condvar,
}

impl Activity {
    fn settle(&self, counter: &AtomicUsize) {
        if counter.fetch_sub(1, Ordering::SeqCst) == 1 && self.closed.load(Ordering::SeqCst) {
            let _guard = self.lock.lock();
            self.idle.notify_all();
        }
    }

    fn is_idle(&self) -> bool {
        self.running.load(Ordering::SeqCst) == 0 && self.tools.load(Ordering::SeqCst) == 0
    }

    /// What `close` would still wait for, in words.
    fn outstanding(&self) -> String {
        let running = self.running.load(Ordering::SeqCst);
        let tools = self.tools.load(Ordering::SeqCst);
        match (running, tools) {
            (0, 0) => "nothing is left (it finished just now)".into(),
            (r, 0) => format!("{r} callback(s) of this registry were still running"),
            (0, t) => {
                format!("{t} tool(s) were not yet destroyed (calls of theirs still in flight)")
            }
            (r, t) => {
                format!("{r} callback(s) were still running and {t} tool(s) were not yet destroyed")
            }
        }
    }
}

/// Counts a tool as alive until it is dropped. The last field of `Tool`, so
/// it drops after the handler (whose drop is the host's destroy).
struct Alive(Arc<Activity>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.settle(&self.0.tools);
    }
}

/// What a tool is, apart from its schema and handler.
#[derive(Clone, Debug)]
pub struct ToolMeta {
    pub name: String,
    pub description: String,
    pub flags: ToolFlags,
    pub timeout_ms: u32,
    pub max_output_chars: u32,
}

/// A registered tool. Calls in flight keep it alive after it is replaced or removed.
///
/// The parameters schema is checked in full (compiled) at registration, but
/// kept as compact text; the compiled validator is built again on the tool's
/// first call and kept from then on. A compiled validator takes tens of
/// kilobytes: a registry of thousands of tools, few of them called, stays small.
pub struct Tool {
    pub meta: ToolMeta,
    parameters: Arc<str>,
    /// Defaults and warnings worked out at registration, reused by the first call.
    prepared: Prepared,
    schema: std::sync::OnceLock<Schema>,
    pub(crate) handler: Box<dyn Handler>,
    serial_busy: Mutex<bool>,
    serial_free: Condvar,
    pub(crate) stats: Arc<ToolStats>,
    _alive: Alive,
}

impl Tool {
    /// The compiled schema, built on first use.
    pub(crate) fn schema(&self) -> Result<&Schema, Error> {
        if let Some(schema) = self.schema.get() {
            return Ok(schema);
        }
        let value: serde_json::Value = serde_json::from_str(&self.parameters)
            .map_err(|e| Error::Internal(format!("stored schema is not JSON: {e}")))?;
        let schema = Schema::compile_prepared(&value, &self.prepared)?;
        Ok(self.schema.get_or_init(|| schema))
    }

    /// The schema as registered (compact JSON text).
    pub fn parameters_text(&self) -> &str {
        &self.parameters
    }

    /// The describable part of the tool.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.meta.name.clone(),
            description: self.meta.description.clone(),
            parameters: serde_json::from_str(&self.parameters).unwrap_or(serde_json::Value::Null),
            flags: self.meta.flags,
            timeout_ms: self.meta.timeout_ms,
            max_output_chars: self.meta.max_output_chars,
            warnings: self.prepared.warnings().to_vec(),
        }
    }

    /// For serial tools, blocks until no other call of this tool is running.
    pub(crate) fn enter(&self) {
        if !self.meta.flags.serial() {
            return;
        }
        let Ok(mut busy) = self.serial_busy.lock() else {
            return;
        };
        while *busy {
            busy = match self.serial_free.wait(busy) {
                Ok(b) => b,
                Err(_) => return,
            };
        }
        *busy = true;
    }

    pub(crate) fn leave(&self) {
        if !self.meta.flags.serial() {
            return;
        }
        if let Ok(mut busy) = self.serial_busy.lock() {
            *busy = false;
        }
        self.serial_free.notify_one();
    }
}

/// Registry-wide options.
#[derive(Clone, Debug, Default)]
pub struct RegistryOptions {
    /// Coerce strings to number/integer/boolean where the schema asks for those.
    pub coerce: bool,
    /// Refuse a schema with a `default` that fails its own subschema
    /// (`Error::InvalidSchema` naming the default's JSON Pointer) instead of
    /// registering it with a warning and never filling that default.
    pub strict_defaults: bool,
}

/// Puts `new` in `slot` and drops what was there outside the lock. Refused
/// (and `new` dropped) once the registry is closed: checked under the lock
/// that `close` takes after setting its flag, so no hook outlives `close`.
/// `set` runs under the lock with whether a hook is now in place.
fn replace_hook<T>(
    shared: &Shared,
    slot: &RwLock<Option<T>>,
    new: Option<T>,
    set: impl FnOnce(bool),
) -> Result<(), Error> {
    let mut guard = slot
        .write()
        .map_err(|_| Error::Internal("registry lock poisoned".into()))?;
    if new.is_some() && shared.is_closed() {
        drop(guard);
        drop(new);
        return Err(Error::ShuttingDown("the registry is closed".into()));
    }
    let old = std::mem::replace(&mut *guard, new);
    set(guard.is_some());
    drop(guard);
    drop(old);
    Ok(())
}

/// Names accepted by every provider: `^[A-Za-z0-9_-]{1,64}$`.
pub fn check_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidName(format!(
            "{name:?}: a tool name must be 1 to 64 characters of A-Z, a-z, 0-9, '_' or '-'"
        )))
    }
}

/// How an event-loop host learns that work is waiting for it (a polled
/// result, a main-thread call): a callback and, on Linux, an eventfd.
#[derive(Default)]
pub(crate) struct Wake {
    callback: RwLock<Option<Arc<dyn Fn() + Send + Sync>>>,
    armed: AtomicBool,
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

/// Tools by name. Names are chosen by the host, not by a model, so no one
/// can pick colliding keys: FNV-1a, a few ns per lookup, instead of SipHash.
type ToolMap = HashMap<String, Arc<Tool>, std::hash::BuildHasherDefault<NameHasher>>;

#[derive(Default)]
struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

pub(crate) struct Shared {
    /// Bumped whenever the set of tools changes (workers cache lookups).
    generation: std::sync::atomic::AtomicU64,
    pub(crate) wake: Wake,
    pub(crate) observer: Observer,
    approver: RwLock<Option<Approver>>,
    tools: RwLock<ToolMap>,
    pub(crate) options: RegistryOptions,
    activity: Arc<Activity>,
    /// Main-thread tool calls waiting for `pump`.
    pub(crate) main_queue: crate::exec::MainQueue,
    /// Threads that ever pumped (see `thread_token`): each counts as a main
    /// thread. `any_pumped` keeps the lock off the path of hosts that never pump.
    pumped: Mutex<Vec<u64>>,
    any_pumped: AtomicBool,
    /// Batches that may still be running, for `close`.
    pub(crate) batches: Mutex<Vec<std::sync::Weak<crate::exec::BatchInner>>>,
    /// Tool names indexed for "did you mean", with the generation they are of.
    name_index: Mutex<Option<(u64, Arc<NameIndex>)>>,
    /// Called after every change of the set of tools (the MCP server's
    /// `list_changed`), outside every lock; each with the id it was added as.
    change_listeners: Mutex<Vec<(u64, ChangeListener)>>,
}

/// See `Registry::add_change_listener`.
pub type ChangeListener = Arc<dyn Fn() + Send + Sync>;

thread_local! {
    /// Registries whose tool callback is running on this thread, innermost last.
    static IN_CALLBACK: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    static TOKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A number naming the calling thread, never reused; `None` once the thread's
/// locals are gone (a thread-exit destructor calling into capstan).
pub(crate) fn thread_token() -> Option<u64> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    TOKEN
        .try_with(|t| {
            if t.get() == 0 {
                t.set(NEXT.fetch_add(1, Ordering::Relaxed));
            }
            t.get()
        })
        .ok()
}

impl Shared {
    fn key(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// Runs host code (a tool or result callback), counted so that `close`
    /// can wait for it.
    pub(crate) fn run_callback(self: &Arc<Self>, f: impl FnOnce()) {
        let key = self.key();
        // try_with: on a thread whose locals are gone (a thread-exit
        // destructor) nesting is not tracked, and the work is simply counted.
        let nested = IN_CALLBACK
            .try_with(|v| {
                v.try_borrow()
                    .map(|v| v.last() == Some(&key))
                    .unwrap_or(false)
            })
            .unwrap_or(false);
        if nested {
            return f(); // already counted, by the worker that runs us
        }
        self.activity.running.fetch_add(1, Ordering::SeqCst);
        let pushed = IN_CALLBACK
            .try_with(|v| v.try_borrow_mut().map(|mut v| v.push(key)).is_ok())
            .unwrap_or(false);
        f();
        if pushed {
            let _ = IN_CALLBACK.try_with(|v| v.try_borrow_mut().map(|mut v| v.pop()));
        }
        self.activity.settle(&self.activity.running);
    }

    fn in_own_callback(self: &Arc<Self>) -> bool {
        let key = self.key();
        IN_CALLBACK
            .try_with(|v| v.try_borrow().map(|v| v.contains(&key)).unwrap_or(false))
            .unwrap_or(false)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.activity.closed.load(Ordering::SeqCst)
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        let listeners: Vec<ChangeListener> = match self.change_listeners.lock() {
            Ok(l) => l.iter().map(|(_, f)| f.clone()).collect(),
            Err(_) => Vec::new(),
        };
        for f in listeners {
            f();
        }
    }

    pub(crate) fn approver(&self) -> Option<Approver> {
        self.approver.read().ok().and_then(|a| a.clone())
    }

    /// True on a thread that ever called `pump` on this registry: its main
    /// thread (there may be several).
    pub(crate) fn is_pump_thread(&self) -> bool {
        if !self.any_pumped.load(Ordering::Acquire) {
            return false;
        }
        let Some(me) = thread_token() else {
            return false;
        };
        self.pumped.lock().map(|t| t.contains(&me)).unwrap_or(false)
    }

    /// Records the calling thread as a main thread of this registry.
    pub(crate) fn mark_pump_thread(&self) {
        let Some(me) = thread_token() else {
            return;
        };
        if let Ok(mut t) = self.pumped.lock() {
            if !t.contains(&me) {
                t.push(me);
            }
        }
        self.any_pumped.store(true, Ordering::Release);
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<Tool>> {
        self.tools.read().ok()?.get(name).cloned()
    }

    /// The text of an unknown-tool result (see `suggest.rs`), from an index
    /// of the names built once per change of the tool set.
    pub(crate) fn unknown_tool_text(&self, name: &str) -> String {
        let generation = self.generation();
        let cached = self.name_index.lock().ok().and_then(|c| {
            c.as_ref()
                .filter(|(g, _)| *g == generation)
                .map(|(_, i)| i.clone())
        });
        let index = match cached {
            Some(index) => index,
            None => {
                let names = match self.tools.read() {
                    Ok(t) => t.keys().cloned().collect(),
                    Err(_) => Vec::new(),
                };
                let index = Arc::new(NameIndex::new(names));
                if let Ok(mut c) = self.name_index.lock() {
                    *c = Some((generation, index.clone()));
                }
                index
            }
        };
        index.unknown_tool_text(name)
    }
}

/// The tools of one host. Cheap to clone (shared); thread-safe.
#[derive(Clone)]
pub struct Registry {
    pub(crate) shared: Arc<Shared>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new(RegistryOptions::default())
    }
}

impl Registry {
    pub fn new(options: RegistryOptions) -> Registry {
        Registry {
            shared: Arc::new(Shared {
                tools: RwLock::new(ToolMap::default()),
                options,
                activity: Arc::new(Activity {
                    running: AtomicUsize::new(0),
                    tools: AtomicUsize::new(0),
                    closed: AtomicBool::new(false),
                    lock: Mutex::new(()),
                    idle: Condvar::new(),
                }),
                main_queue: crate::exec::MainQueue::default(),
                pumped: Mutex::new(Vec::new()),
                any_pumped: AtomicBool::new(false),
                batches: Mutex::new(Vec::new()),
                name_index: Mutex::new(None),
                generation: std::sync::atomic::AtomicU64::new(0),
                wake: Wake::default(),
                observer: Observer::default(),
                approver: RwLock::new(None),
                change_listeners: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Calls `f` (quick, non-blocking, on the registering thread) after every
    /// register or unregister, until `remove_change_listener(id)`.
    pub fn add_change_listener(&self, f: ChangeListener) -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut l) = self.shared.change_listeners.lock() {
            l.push((id, f));
        }
        id
    }

    pub fn remove_change_listener(&self, id: u64) {
        if let Ok(mut l) = self.shared.change_listeners.lock() {
            l.retain(|(i, _)| *i != id);
        }
    }

    pub fn options(&self) -> &RegistryOptions {
        &self.shared.options
    }

    /// Registers a tool, replacing one of the same name. On error the
    /// definition (and so its handler) is dropped before this returns.
    pub fn register(&self, def: ToolDef) -> Result<(), Error> {
        if self.shared.is_closed() {
            return Err(Error::ShuttingDown("the registry is closed".into()));
        }
        check_name(&def.name)?;
        if def.flags.0 & !ToolFlags::KNOWN != 0 {
            return Err(Error::InvalidArgument(format!(
                "unknown tool flags 0x{:x}",
                def.flags.0 & !ToolFlags::KNOWN
            )));
        }
        // Compiled now so that every schema error is a registration error;
        // kept as text until the first call (see `Tool`).
        let schema = Schema::compile(&def.parameters)?;
        if let (true, Some(first)) = (
            self.shared.options.strict_defaults,
            schema.warnings().first(),
        ) {
            return Err(Error::InvalidSchema(first.clone()));
        }
        let prepared = schema.prepared().clone();
        drop(schema);
        let parameters: Arc<str> = def.parameters.to_string().into();
        self.shared.activity.tools.fetch_add(1, Ordering::SeqCst);
        let tool = Arc::new(Tool {
            meta: ToolMeta {
                name: def.name.clone(),
                description: def.description,
                flags: def.flags,
                timeout_ms: def.timeout_ms,
                max_output_chars: def.max_output_chars,
            },
            parameters,
            prepared,
            schema: std::sync::OnceLock::new(),
            handler: def.handler,
            serial_busy: Mutex::new(false),
            serial_free: Condvar::new(),
            stats: self.shared.observer.stats_for(&def.name),
            _alive: Alive(self.shared.activity.clone()),
        });
        let mut tools = self
            .shared
            .tools
            .write()
            .map_err(|_| Error::Internal("registry lock poisoned".into()))?;
        // Checked under the lock `close` takes after setting the flag: a
        // registration racing `close` is either emptied out by it or refused.
        if self.shared.is_closed() {
            drop(tools);
            drop(tool); // runs its destroy, outside the lock
            return Err(Error::ShuttingDown("the registry is closed".into()));
        }
        let old = tools.insert(def.name, tool);
        drop(tools);
        self.shared.changed();
        drop(old); // outside the lock: may run the old tool's destroy
        Ok(())
    }

    /// Removes a tool. Its calls in flight finish; its destroy runs after them.
    pub fn unregister(&self, name: &str) -> Result<(), Error> {
        let old = self
            .shared
            .tools
            .write()
            .map_err(|_| Error::Internal("registry lock poisoned".into()))?
            .remove(name);
        self.shared.changed();
        match old {
            Some(tool) => {
                drop(tool);
                Ok(())
            }
            None => Err(Error::NotFound(format!("no tool named {name:?}"))),
        }
    }

    pub fn get(&self, name: &str) -> Option<Arc<Tool>> {
        self.shared.get(name)
    }

    /// Registered tool names, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = match self.shared.tools.read() {
            Ok(t) => t.keys().cloned().collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        names
    }

    /// Specs of every tool, sorted by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = match self.shared.tools.read() {
            Ok(t) => t.values().map(|t| t.spec()).collect(),
            Err(_) => Vec::new(),
        };
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs
    }

    pub fn len(&self) -> usize {
        self.shared.tools.read().map(|t| t.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True once `close` was called.
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Sets (or with `None` removes) the approver: it receives every call of a
    /// tool flagged `REQUIRES_APPROVAL` that the batch did not pre-approve.
    /// Without one, such calls are `denied`. The replaced approver is dropped
    /// once its last invocation returned (see `set_event_hook`).
    pub fn set_approver(&self, approver: Option<Approver>) -> Result<(), Error> {
        replace_hook(&self.shared, &self.shared.approver, approver, |_| {})
    }

    /// Sets (or with `None` removes) the event hook: called, on the thread
    /// where it happens, when a call starts, finishes, times out or is
    /// cancelled. It must be quick; it may not block.
    ///
    /// Every invocation holds its own clone of the hook, so the replaced hook
    /// is dropped (a C host's destroy runs) exactly once, when its last
    /// invocation has returned: here, or on the thread of that invocation.
    /// `close` removes every hook the same way. After `close`, setting one is
    /// `ShuttingDown` and the hook is dropped before this returns.
    pub fn set_event_hook(&self, hook: Option<EventHook>) -> Result<(), Error> {
        let observer = &self.shared.observer;
        replace_hook(&self.shared, &observer.hook, hook, |some| {
            observer.has_hook.store(some, Ordering::Release)
        })
    }

    /// Per-tool stats: `{"tools":{name:{"calls","outcomes":{..},"in_flight","p50_us","p99_us"}}}`.
    pub fn stats_json(&self) -> serde_json::Value {
        self.shared.observer.stats_json()
    }

    /// Calls `f` (on whatever thread) whenever a result is queued for polling
    /// or a main-thread call waits for `pump`. `None` removes it. `f` must be
    /// quick and must not block: wake your loop, nothing more. Dropped like
    /// the event hook (see `set_event_hook`).
    pub fn set_notify(&self, f: Option<Arc<dyn Fn() + Send + Sync>>) -> Result<(), Error> {
        let wake = &self.shared.wake;
        replace_hook(&self.shared, &wake.callback, f, |some| {
            if some {
                wake.armed.store(true, Ordering::Release);
            }
        })
    }

    /// Removes the approver, event hook and notifier (on `close`).
    fn remove_hooks(&self) {
        let shared = &self.shared;
        let approver = shared.approver.write().ok().and_then(|mut a| a.take());
        let hook = shared.observer.hook.write().ok().and_then(|mut h| {
            shared.observer.has_hook.store(false, Ordering::Release);
            h.take()
        });
        let notify = shared.wake.callback.write().ok().and_then(|mut c| c.take());
        // Outside the locks: each may run a host's destroy.
        drop((approver, hook, notify));
    }

    /// A file descriptor (Linux eventfd) that becomes readable when a result is
    /// queued for polling or a main-thread call waits for `pump`. The host reads
    /// 8 bytes to reset it, then polls its batches and pumps. Owned by the
    /// registry: do not close it.
    #[cfg(target_os = "linux")]
    pub fn wake_fd(&self) -> Result<i32, Error> {
        let wake = &self.shared.wake;
        if let Some(fd) = wake.fd.get() {
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
        if wake.fd.set(fd).is_err() {
            // SAFETY: we created fd just now and nobody else has it.
            unsafe { libc::close(fd) };
        }
        wake.armed.store(true, Ordering::Release);
        wake.fd
            .get()
            .copied()
            .ok_or_else(|| Error::Internal("eventfd lost".into()))
    }

    /// Shuts the registry down: no new calls start, every call in flight is
    /// reported cancelled, and tools are dropped. Then waits, up to `wait`,
    /// until no host code of this registry runs on another thread (tool and
    /// result callbacks) and every tool's destroy has run. From inside one of
    /// this registry's own callbacks it does not wait (that would deadlock):
    /// what is still running finishes, and destroys run, after that callback
    /// returns. Returns whether everything had finished.
    ///
    /// A registration racing `close` is refused (`ShuttingDown`) or removed by
    /// it. The approver, event hook and notifier are removed (dropped once
    /// their last invocation returns), after the cancellations were reported.
    pub fn close(&self, wait: Duration) -> bool {
        self.shared.activity.closed.store(true, Ordering::SeqCst);
        crate::exec::cancel_all(&self.shared);
        let tools = match self.shared.tools.write() {
            Ok(mut t) => std::mem::take(&mut *t),
            Err(_) => ToolMap::default(),
        };
        self.shared.changed();
        drop(tools);
        self.remove_hooks();
        if self.shared.in_own_callback() {
            return false;
        }
        let activity = &self.shared.activity;
        let deadline = std::time::Instant::now().checked_add(wait);
        let Ok(mut guard) = activity.lock.lock() else {
            return false;
        };
        while !activity.is_idle() {
            let now = std::time::Instant::now();
            let slice = match deadline {
                Some(d) if now >= d => return false,
                Some(d) => (d - now).min(Duration::from_millis(100)),
                None => Duration::from_millis(100),
            };
            guard = match activity.idle.wait_timeout(guard, slice) {
                Ok((g, _)) => g,
                Err(_) => return false,
            };
        }
        true
    }

    /// What a `close` that returned false was still waiting for, in words.
    pub fn close_outstanding(&self) -> String {
        self.shared.activity.outstanding()
    }
}
