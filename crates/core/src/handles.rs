//! Generation-tagged handle tables: how a C host names a live object without
//! ever holding a pointer that can dangle.
//!
//! A handle is a non-zero `usize` packing (generation, slot, shard). Removing
//! an entry bumps the slot's generation, so an old handle stops resolving
//! instead of reaching a reused slot. Shards keep threads off each other's locks.
//!
//! A freed slot is reused only once `REUSE_AFTER` slots of its shard are free,
//! oldest first: between two handles of one slot the shard issues at least
//! `REUSE_AFTER - 1` others. A stale handle could resolve again only when its slot's
//! generation wraps around to it: after 2^36 reuses of the slot on 64-bit
//! targets (never, in practice) and after 2^18 - 1 on 32-bit ones, that is
//! after more than 16 million handles issued by its shard in between (the
//! split used to keep 4 generation bits on 32-bit targets: the 17th use of a
//! slot revived the first handle).

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

// 64-bit: 16 shards of 2^24 slots, 36 generation bits.
#[cfg(target_pointer_width = "64")]
const SHARD_BITS: u32 = 4;
#[cfg(target_pointer_width = "64")]
const SLOT_BITS: u32 = 24;
// 32-bit: 4 shards of 4096 slots (16384 live handles, a full home shard
// spills into the others), 18 generation bits.
#[cfg(not(target_pointer_width = "64"))]
const SHARD_BITS: u32 = 2;
#[cfg(not(target_pointer_width = "64"))]
const SLOT_BITS: u32 = 12;
const SHARDS: usize = 1 << SHARD_BITS;
const GEN_BITS: u32 = usize::BITS - SHARD_BITS - SLOT_BITS;
const GEN_MASK: usize = (1 << GEN_BITS) - 1;
/// How many free slots a shard keeps before it reuses one (it grows instead).
const REUSE_AFTER: usize = 64;

struct Entry<T> {
    generation: usize,
    value: Option<Arc<T>>,
}

struct Shard<T> {
    entries: Vec<Entry<T>>,
    /// Freed slots, oldest first.
    free: VecDeque<usize>,
}

pub struct HandleTable<T> {
    shards: [Mutex<Shard<T>>; SHARDS],
    /// Slots per shard: `1 << SLOT_BITS` (fewer in tests).
    capacity: usize,
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
        Self::with_capacity(1 << SLOT_BITS)
    }

    fn with_capacity(capacity: usize) -> Self {
        HandleTable {
            shards: std::array::from_fn(|_| {
                Mutex::new(Shard {
                    entries: Vec::new(),
                    free: VecDeque::new(),
                })
            }),
            capacity: capacity.min(1 << SLOT_BITS),
        }
    }

    /// Stores `value` and returns its handle: in the calling thread's shard,
    /// or when that one is full in the next with room; `None` if all are full.
    pub fn insert(&self, value: Arc<T>) -> Option<usize> {
        let home = home_shard();
        let mut value = Some(value);
        (0..SHARDS).find_map(|i| self.insert_in((home + i) % SHARDS, &mut value))
    }

    /// Stores `value` (taken) in one shard, unless it is full.
    fn insert_in(&self, shard_index: usize, value: &mut Option<Arc<T>>) -> Option<usize> {
        let mut shard = self.shards[shard_index].lock().ok()?;
        let grow = shard.free.len() < REUSE_AFTER && shard.entries.len() < self.capacity;
        let slot = if grow {
            shard.entries.push(Entry {
                generation: 1,
                value: None,
            });
            shard.entries.len() - 1
        } else {
            shard.free.pop_front()?
        };
        let entry = &mut shard.entries[slot];
        entry.value = value.take();
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
        shard.free.push_back(slot);
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
    use std::collections::{HashMap, HashSet};

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
    fn a_slot_reused_thousands_of_times_never_revives_a_stale_handle() {
        // The old split kept 4 generation bits on 32-bit targets: there the
        // 17th handle of a slot equalled its first, which resolved again.
        // `make i686-test` runs this on a 32-bit target.
        const ROUNDS: usize = 1000 * (REUSE_AFTER + 1);
        let table = HandleTable::new();
        let mut issued = HashSet::new();
        // Per slot: how often it was used and every handle it had.
        let mut by_slot: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        for round in 0..ROUNDS {
            let handle = table.insert(Arc::new(round)).unwrap();
            assert!(issued.insert(handle), "handle {handle:#x} issued twice");
            let (_, slot, shard) = unpack(handle);
            let earlier = by_slot.entry((slot, shard)).or_default();
            // While the slot is live again, its earlier handles do not reach
            // it (the last 20: the old split revived the one 16 uses back).
            assert!(earlier
                .iter()
                .rev()
                .take(20)
                .all(|h| table.get(*h).is_none()));
            earlier.push(handle);
            assert_eq!(table.remove(handle).as_deref(), Some(&round));
        }
        assert!(
            by_slot.values().all(|uses| uses.len() >= 1000),
            "every slot was reused far past 16 times"
        );
    }

    #[test]
    fn a_freed_slot_waits_behind_reuse_after_minus_one_others() {
        let table = HandleTable::new();
        let first = table.insert(Arc::new(0)).unwrap();
        table.remove(first);
        let slot_of = |h| {
            let (_, slot, shard) = unpack(h);
            (slot, shard)
        };
        for i in 1..REUSE_AFTER {
            let handle = table.insert(Arc::new(i)).unwrap();
            assert_ne!(slot_of(handle), slot_of(first), "reused after {i}");
            table.remove(handle);
        }
        let next = table.insert(Arc::new(0)).unwrap();
        assert_eq!(slot_of(next), slot_of(first), "then the oldest free slot");
        assert_ne!(next, first);
    }

    #[test]
    fn a_full_shard_spills_into_the_others_then_insert_fails() {
        let table = HandleTable::with_capacity(3);
        let handles: Vec<usize> = (0..3 * SHARDS)
            .map(|i| table.insert(Arc::new(i)).unwrap())
            .collect();
        let shards: HashSet<usize> = handles.iter().map(|h| unpack(*h).2).collect();
        assert_eq!(shards.len(), SHARDS);
        assert!(table.insert(Arc::new(0)).is_none(), "every shard full");
        for (i, handle) in handles.iter().enumerate() {
            assert_eq!(table.get(*handle).as_deref(), Some(&i));
        }
        table.remove(handles[5]);
        assert!(table.insert(Arc::new(0)).is_some(), "room again");
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
