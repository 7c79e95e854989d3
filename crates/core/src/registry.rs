//! Tools by name: register, replace, remove, look up, describe; the
//! registry's hooks (event hook, notifier) and its close state.
//!
//! The registry knows tools, not calls: the executor (`exec`) keeps its own
//! per-registry state in the registry's extension slot and hears of `close`
//! through it (see `Extension`). Nothing here names the executor.

mod activity;
pub(crate) mod search;
mod tool;
mod wake;

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use crate::error::Error;
use crate::observe::{EventHook, Observer};
use crate::schema::Schema;
use crate::suggest::NameIndex;
use crate::tool::{ToolFlags, ToolSpec};
use crate::tool_meta::McpMeta;

use activity::{Activity, Alive};
pub use tool::{Runnable, Tool, ToolDef, ToolMeta};
pub(crate) use wake::Wake;

/// Registry-wide options.
#[derive(Clone, Debug, Default)]
pub struct RegistryOptions {
    /// Coerce strings to number/integer/boolean where the schema asks for those.
    pub coerce: bool,
    /// Refuse a schema with a `default` that fails its own subschema
    /// (`Error::InvalidSchema` naming the default's JSON Pointer) instead of
    /// registering it with a warning and never filling that default.
    pub strict_defaults: bool,
    /// Refuse a schema with a key one or two edits from a JSON Schema
    /// keyword (`requried`, `propertes`: `Error::InvalidSchema` naming the
    /// key, where, and the keyword meant) instead of registering it with a
    /// warning.
    pub strict_keywords: bool,
    /// Bound on one result's content-part data, in decoded bytes (image,
    /// audio and resource blobs together); 0 = `parts::DEFAULT_MAX_RESULT_BYTES`
    /// (10 MiB). A result past it becomes a tool error for that call.
    pub max_result_bytes: u64,
}

/// State a layer above the registry keeps per registry (the executor's
/// batches, main-thread queue and approver), held without the registry
/// knowing its type. One per registry.
pub trait Extension: Any + Send + Sync {
    /// The registry is closing: called once, on the closing thread, after it
    /// stopped starting calls and before its tools and hooks are dropped.
    fn on_close(&self);
}

/// Puts `new` in `slot` and drops what was there outside the lock. Refused
/// (and `new` dropped) once the registry is closed: checked under the lock
/// that `close` takes after setting its flag, so no hook outlives `close`.
/// `set` runs under the lock with whether a hook is now in place.
pub(crate) fn replace_hook<T>(
    registry: &Registry,
    slot: &RwLock<Option<T>>,
    new: Option<T>,
    set: impl FnOnce(bool),
) -> Result<(), Error> {
    let mut guard = slot
        .write()
        .map_err(|_| Error::Internal("registry lock poisoned".into()))?;
    if new.is_some() && registry.is_closed() {
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

/// Takes what `slot` holds (on `close`), to drop outside its lock.
pub(crate) fn take_hook<T>(slot: &RwLock<Option<T>>) -> Option<T> {
    slot.write().ok().and_then(|mut s| s.take())
}

/// A second registration under `name` without `ToolFlags::REPLACE`.
fn duplicate(name: &str) -> Error {
    Error::InvalidArgument(format!(
        "a tool named {name:?} is already registered; to replace it, register it with the \
         replace flag (CAPSTAN_TOOL_REPLACE; each binding has a replace option), or remove it first"
    ))
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
    generation: AtomicU64,
    pub(crate) wake: Wake,
    pub(crate) observer: Observer,
    tools: RwLock<ToolMap>,
    pub(crate) options: RegistryOptions,
    activity: Arc<Activity>,
    /// The layer above's state (see `Extension`).
    extension: OnceLock<Arc<dyn Extension>>,
    /// Tool names indexed for "did you mean", with the generation they are of.
    name_index: Mutex<Option<(u64, Arc<NameIndex>)>>,
    /// Called after every change of the set of tools (the MCP server's
    /// `list_changed`), outside every lock; each with the id it was added as.
    change_listeners: Mutex<Vec<(u64, ChangeListener)>>,
    /// The search index (`crate::search`), built on the first search and
    /// updated under the `tools` write lock from then on (lock order:
    /// `tools`, then `search`).
    pub(crate) search: crate::search::State,
}

/// See `Registry::add_change_listener`.
pub type ChangeListener = Arc<dyn Fn() + Send + Sync>;

impl Shared {
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
    /// The text of an unknown-tool result for `name`: "did you mean" the
    /// nearest registered names (see `suggest.rs`).
    pub fn unknown_tool_text(&self, name: &str) -> String {
        self.shared.unknown_tool_text(name)
    }

    pub fn new(options: RegistryOptions) -> Registry {
        Registry {
            shared: Arc::new(Shared {
                tools: RwLock::new(ToolMap::default()),
                options,
                activity: Arc::new(Activity::new()),
                extension: OnceLock::new(),
                name_index: Mutex::new(None),
                generation: AtomicU64::new(0),
                wake: Wake::default(),
                observer: Observer::default(),
                change_listeners: Mutex::new(Vec::new()),
                search: crate::search::State::default(),
            }),
        }
    }

    /// The layer above's state of this registry, made by `init` on first use;
    /// `None` if the slot holds another type.
    pub(crate) fn extension<T: Extension>(&self, init: impl FnOnce() -> T) -> Option<Arc<T>> {
        let ext = self.shared.extension.get_or_init(|| Arc::new(init()));
        let any: Arc<dyn Any + Send + Sync> = ext.clone();
        any.downcast::<T>().ok()
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

    /// Registers a tool. A tool of the same name already registered makes it
    /// `Error::InvalidArgument` (the registry unchanged) unless `def.flags`
    /// has `ToolFlags::REPLACE`: then the old tool is replaced (its calls in
    /// flight finish; its handler drops after them). On error the
    /// definition (and so its handler) is dropped before this returns.
    pub fn register<H: Runnable>(&self, def: ToolDef<H>) -> Result<(), Error> {
        self.register_with_mcp(def, McpMeta::default())
    }

    /// [`Registry::register`] with MCP metadata (title, annotations,
    /// outputSchema, icons) carried by the tool. An `outputSchema` that does
    /// not compile, or whose root is not `"type": "object"`, is
    /// `Error::InvalidSchema`.
    pub fn register_with_mcp<H: Runnable>(
        &self,
        mut def: ToolDef<H>,
        mcp: McpMeta,
    ) -> Result<(), Error> {
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
        let output_schema = mcp.compile_output_schema(&format!("tool {:?}", def.name))?;
        if let (true, Some(first)) = (
            self.shared.options.strict_defaults,
            schema.default_warnings().first(),
        ) {
            return Err(Error::InvalidSchema(first.clone()));
        }
        if let (true, Some(first)) = (
            self.shared.options.strict_keywords,
            schema.keyword_warnings().first(),
        ) {
            return Err(Error::InvalidSchema(format!(
                "tool {:?}: {first}",
                def.name
            )));
        }
        // How to register, not what the tool is: not kept on it.
        let replace = def.flags.0 & ToolFlags::REPLACE != 0;
        def.flags.0 &= !ToolFlags::REPLACE;
        let name = def.name.clone();
        let stats = self.shared.observer.stats_for(&name);
        let tool = Arc::new(Tool::new(
            def,
            &schema,
            (mcp, output_schema),
            stats,
            Alive::new(&self.shared.activity),
        ));
        drop(schema);
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
        if !replace && tools.contains_key(&name) {
            drop(tools);
            drop(tool); // runs its destroy, outside the lock
            return Err(duplicate(&name));
        }
        self.update_search(|ix| search::index_tool(ix, &tool));
        let old = tools.insert(name, tool);
        drop(tools);
        self.shared.changed();
        drop(old); // outside the lock: may run the old tool's destroy
        Ok(())
    }

    /// Removes a tool. Its calls in flight finish; its destroy runs after them.
    pub fn unregister(&self, name: &str) -> Result<(), Error> {
        let mut tools = self
            .shared
            .tools
            .write()
            .map_err(|_| Error::Internal("registry lock poisoned".into()))?;
        let old = tools.remove(name);
        if old.is_some() {
            self.update_search(|ix| ix.remove(name));
        }
        drop(tools);
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

    /// Applies `f` to the search index if one was built (called with the
    /// `tools` write lock held).
    fn update_search(&self, f: impl FnOnce(&mut crate::search::Index)) {
        if let Ok(mut ix) = self.shared.search.index.write() {
            if let Some(ix) = ix.as_mut() {
                f(ix);
            }
        }
    }

    /// Runs `f` on the search index, building it from the registered tools
    /// on first use.
    pub(crate) fn with_search_index<R>(
        &self,
        f: impl FnOnce(&crate::search::Index) -> R,
    ) -> Result<R, Error> {
        let poisoned = || Error::Internal("registry lock poisoned".into());
        {
            let ix = self.shared.search.index.read().map_err(|_| poisoned())?;
            if let Some(ix) = ix.as_ref() {
                return Ok(f(ix));
            }
        }
        let tools = self.shared.tools.read().map_err(|_| poisoned())?;
        let mut slot = self.shared.search.index.write().map_err(|_| poisoned())?;
        let ix = slot.get_or_insert_with(|| {
            let mut ix = crate::search::Index::default();
            for tool in tools.values() {
                search::index_tool(&mut ix, tool);
            }
            ix
        });
        drop(tools);
        Ok(f(ix))
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
        replace_hook(self, &observer.hook, hook, |some| {
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
        replace_hook(self, &wake.callback, f, |some| {
            if some {
                wake.armed.store(true, Ordering::Release);
            }
        })
    }

    /// Removes the event hook and notifier (on `close`).
    fn remove_hooks(&self) {
        let observer = &self.shared.observer;
        let hook = observer.hook.write().ok().and_then(|mut h| {
            observer.has_hook.store(false, Ordering::Release);
            h.take()
        });
        let notify = take_hook(&self.shared.wake.callback);
        // Outside the locks: each may run a host's destroy.
        drop((hook, notify));
    }

    /// A file descriptor that becomes readable when a result is queued for
    /// polling or a main-thread call waits for `pump`: an eventfd on Linux and
    /// Android (one 8-byte read resets it), the read end of a non-blocking
    /// pipe on the other Unix systems (read until EAGAIN to reset it). Then
    /// the host polls its batches and pumps. Owned by the registry: do not
    /// close it.
    /// `Unsupported` off Unix (Windows has `wake_handle`).
    pub fn wake_fd(&self) -> Result<i32, Error> {
        #[cfg(unix)]
        return self.shared.wake.fd();
        #[cfg(not(unix))]
        Err(Error::Unsupported(
            "a wake-up file descriptor exists on Unix systems only; on Windows use \
             capstan_registry_wake_handle"
                .into(),
        ))
    }

    /// Windows: an auto-reset event HANDLE that is set when a result is queued
    /// for polling or a main-thread call waits for `pump` (the wait that
    /// returns it resets it). Owned by the registry: do not close it.
    /// `Unsupported` off Windows (Unix has `wake_fd`).
    pub fn wake_handle(&self) -> Result<*mut std::ffi::c_void, Error> {
        #[cfg(windows)]
        return self.shared.wake.handle();
        #[cfg(not(windows))]
        Err(Error::Unsupported(
            "a wake-up event HANDLE exists on Windows only; elsewhere use capstan_registry_wake_fd"
                .into(),
        ))
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
        // The executor reports its calls cancelled and drops its approver.
        if let Some(ext) = self.shared.extension.get() {
            ext.on_close();
        }
        let tools = match self.shared.tools.write() {
            Ok(mut t) => {
                if let Ok(mut ix) = self.shared.search.index.write() {
                    *ix = None;
                }
                std::mem::take(&mut *t)
            }
            Err(_) => ToolMap::default(),
        };
        self.shared.changed();
        drop(tools);
        self.remove_hooks();
        if self.shared.in_own_callback() {
            return false;
        }
        self.shared.activity.wait_idle(wait)
    }

    /// What a `close` that returned false was still waiting for, in words.
    pub fn close_outstanding(&self) -> String {
        self.shared.activity.outstanding()
    }
}
