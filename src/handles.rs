//! Generation-tagged handle tables: how a C host names a live object without
//! ever holding a pointer that can dangle.
//!
//! A handle is a non-zero `usize` packing (generation, slot, shard). Removing
//! an entry bumps the slot's generation, so an old handle stops resolving
//! instead of reaching a reused slot. Shards keep threads off each other's locks.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const SHARD_BITS: u32 = 4;
const SHARDS: usize = 1 << SHARD_BITS;
const SLOT_BITS: u32 = 24;
const GEN_BITS: u32 = usize::BITS - SHARD_BITS - SLOT_BITS;
const GEN_MASK: usize = (1 << GEN_BITS) - 1;

struct Entry<T> {
    generation: usize,
    value: Option<Arc<T>>,
}

struct Shard<T> {
    entries: Vec<Entry<T>>,
    free: Vec<usize>,
}

pub struct HandleTable<T> {
    shards: [Mutex<Shard<T>>; SHARDS],
}

thread_local! {
    static HOME_SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn home_shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    HOME_SHARD
        .try_with(|home| {
            if home.get() == usize::MAX {
                home.set(NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS);
            }
            home.get()
        })
        .unwrap_or(0)
}

fn pack(generation: usize, slot: usize, shard: usize) -> usize {
    (generation << (SLOT_BITS + SHARD_BITS)) | (slot << SHARD_BITS) | shard
}

fn unpack(handle: usize) -> (usize, usize, usize) {
    (
        handle >> (SLOT_BITS + SHARD_BITS),
        (handle >> SHARD_BITS) & ((1 << SLOT_BITS) - 1),
        handle & (SHARDS - 1),
    )
}

impl<T> Default for HandleTable<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> HandleTable<T> {
    pub fn new() -> Self {
        HandleTable {
            shards: std::array::from_fn(|_| {
                Mutex::new(Shard {
                    entries: Vec::new(),
                    free: Vec::new(),
                })
            }),
        }
    }

    /// Stores `value` and returns its handle, or `None` if the shard is full.
    pub fn insert(&self, value: Arc<T>) -> Option<usize> {
        let shard_index = home_shard();
        let mut shard = self.shards[shard_index].lock().ok()?;
        let slot = match shard.free.pop() {
            Some(slot) => slot,
            None => {
                if shard.entries.len() >= 1 << SLOT_BITS {
                    return None;
                }
                shard.entries.push(Entry {
                    generation: 1,
                    value: None,
                });
                shard.entries.len() - 1
            }
        };
        let entry = &mut shard.entries[slot];
        entry.value = Some(value);
        Some(pack(entry.generation, slot, shard_index))
    }

    /// The live value a handle names, if any.
    pub fn get(&self, handle: usize) -> Option<Arc<T>> {
        let (generation, slot, shard) = unpack(handle);
        let shard = self.shards[shard].lock().ok()?;
        let entry = shard.entries.get(slot)?;
        if entry.generation != generation {
            return None;
        }
        entry.value.clone()
    }

    /// Every live value, as a snapshot (for a sweep at shutdown).
    pub fn values(&self) -> Vec<Arc<T>> {
        let mut out = Vec::new();
        for shard in &self.shards {
            if let Ok(shard) = shard.lock() {
                out.extend(shard.entries.iter().filter_map(|e| e.value.clone()));
            }
        }
        out
    }

    /// Removes the entry a handle names and returns its value. The caller
    /// drops it, outside the table's lock.
    pub fn remove(&self, handle: usize) -> Option<Arc<T>> {
        let (generation, slot, shard) = unpack(handle);
        let mut shard = self.shards[shard].lock().ok()?;
        let entry = shard.entries.get_mut(slot)?;
        if entry.generation != generation || entry.value.is_none() {
            return None;
        }
        let value = entry.value.take();
        // Generation 0 is never issued, so handle 0 (NULL) never resolves.
        entry.generation = (entry.generation % GEN_MASK) + 1;
        shard.free.push(slot);
        value
    }
}

impl<T> HandleTable<T> {
    /// The handle of `value`, kept in its `slot` (0 = none yet): made on first
    /// request. If `is_over()` by then (the object finished while its handle was
    /// being made), the handle is withdrawn again at once, so that it never
    /// outlives what it names; the returned value then no longer resolves.
    pub fn handle_in(
        &self,
        slot: &AtomicUsize,
        value: &Arc<T>,
        is_over: impl Fn() -> bool,
    ) -> Option<usize> {
        let existing = slot.load(Ordering::SeqCst);
        if existing != 0 {
            return Some(existing);
        }
        let handle = self.insert(value.clone())?;
        if slot
            .compare_exchange(0, handle, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            drop(self.remove(handle));
            return Some(slot.load(Ordering::SeqCst));
        }
        if is_over() && slot.swap(0, Ordering::SeqCst) == handle {
            drop(self.remove(handle));
        }
        Some(handle)
    }

    /// Withdraws the handle kept in `slot`, if any.
    pub fn withdraw(&self, slot: &AtomicUsize) {
        let handle = slot.swap(0, Ordering::SeqCst);
        if handle != 0 {
            drop(self.remove(handle));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_handle_no_longer_resolves_even_after_slot_reuse() {
        let table = HandleTable::new();
        let a = table.insert(Arc::new(1)).unwrap();
        assert_eq!(table.remove(a).as_deref(), Some(&1));
        let b = table.insert(Arc::new(2)).unwrap();
        assert_ne!(a, b);
        assert!(table.get(a).is_none());
        assert!(table.remove(a).is_none());
        assert_eq!(table.get(b).as_deref(), Some(&2));
    }

    #[test]
    fn null_and_garbage_handles_do_not_resolve() {
        let table: HandleTable<u8> = HandleTable::new();
        assert!(table.get(0).is_none());
        assert!(table.get(usize::MAX).is_none());
        assert!(table.remove(0xdead_beef).is_none());
    }
}

#[cfg(test)]
#[path = "handles_tests.rs"]
mod rule_tests;
