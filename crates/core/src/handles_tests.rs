//! The rules of a handle table, through its public functions only: several
//! live handles on several threads (so several shards), a handle is never 0,
//! removal is final, and `handle_in`/`withdraw` keep one handle per object.

use std::collections::HashSet;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, Barrier};
use std::thread;

use super::HandleTable;

/// More threads than shards: every shard gets entries.
const THREADS: usize = 40;
/// More threads than a process usually starts: shards are picked round-robin
/// for as many threads as come.
const MANY_THREADS: usize = 300;

#[test]
fn live_handles_from_many_threads_each_resolve_to_their_own_value() {
    let table = Arc::new(HandleTable::new());
    let handles: Vec<(usize, usize)> = (0..MANY_THREADS)
        .map(|i| {
            let table = table.clone();
            thread::spawn(move || {
                let first = table.insert(Arc::new(2 * i)).unwrap();
                let second = table.insert(Arc::new(2 * i + 1)).unwrap();
                [(first, 2 * i), (second, 2 * i + 1)]
            })
        })
        .flat_map(|t| t.join().unwrap())
        .collect();
    let distinct: HashSet<usize> = handles.iter().map(|(h, _)| *h).collect();
    assert_eq!(distinct.len(), 2 * MANY_THREADS);
    assert!(!distinct.contains(&0));
    for &(handle, value) in &handles {
        assert_eq!(table.get(handle).as_deref(), Some(&value));
    }
    let mut values: Vec<usize> = table.values().iter().map(|v| **v).collect();
    values.sort_unstable();
    assert_eq!(values, (0..2 * MANY_THREADS).collect::<Vec<_>>());
    // Removal from the main thread reaches every shard.
    for &(handle, value) in &handles {
        assert_eq!(table.remove(handle).as_deref(), Some(&value));
        assert!(table.get(handle).is_none());
    }
    assert!(table.values().is_empty());
}

#[test]
fn a_handle_is_never_zero_and_never_reissued_after_a_remove() {
    // On every thread (so in every shard) a fresh table reuses slot 0 again
    // and again: each handle is new, non-zero, and the old ones stay dead.
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            thread::spawn(|| {
                let table = HandleTable::new();
                let mut issued = Vec::new();
                for round in 0..5u32 {
                    let handle = table.insert(Arc::new(round)).unwrap();
                    assert_ne!(handle, 0);
                    assert!(!issued.contains(&handle), "{handle} issued twice");
                    assert_eq!(table.get(handle).as_deref(), Some(&round));
                    for old in &issued {
                        assert!(table.get(*old).is_none());
                    }
                    assert_eq!(table.remove(handle).as_deref(), Some(&round));
                    assert!(table.remove(handle).is_none(), "removed twice");
                    issued.push(handle);
                }
                assert!(table.get(0).is_none());
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn a_default_table_is_empty_and_usable() {
    let table: HandleTable<u8> = HandleTable::default();
    assert!(table.values().is_empty());
    let handle = table.insert(Arc::new(9)).unwrap();
    assert_eq!(table.get(handle).as_deref(), Some(&9));
}

#[test]
fn handle_in_makes_one_handle_and_keeps_it() {
    let table = HandleTable::new();
    let slot = AtomicUsize::new(0);
    let value = Arc::new("call");
    let handle = table.handle_in(&slot, &value, || false).unwrap();
    assert_ne!(handle, 0);
    assert_eq!(slot.load(SeqCst), handle);
    assert_eq!(table.get(handle).as_deref(), Some(&"call"));
    assert_eq!(table.handle_in(&slot, &value, || false), Some(handle));
    assert_eq!(table.values().len(), 1, "asked twice, made once");
}

#[test]
fn handle_in_on_a_finished_object_returns_a_dead_handle() {
    let table = HandleTable::new();
    let slot = AtomicUsize::new(0);
    let handle = table.handle_in(&slot, &Arc::new(7), || true).unwrap();
    assert_ne!(handle, 0);
    assert!(table.get(handle).is_none());
    assert_eq!(slot.load(SeqCst), 0);
    assert!(table.values().is_empty());
}

#[test]
fn handle_in_from_racing_threads_agrees_on_one_handle() {
    let table = Arc::new(HandleTable::new());
    let slot = Arc::new(AtomicUsize::new(0));
    let value = Arc::new(42);
    let start = Arc::new(Barrier::new(8));
    let got: HashSet<usize> = (0..8)
        .map(|_| {
            let (table, slot, value, start) =
                (table.clone(), slot.clone(), value.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                table.handle_in(&slot, &value, || false).unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert_eq!(got.len(), 1, "{got:?}");
    let handle = slot.load(SeqCst);
    assert!(got.contains(&handle));
    assert_eq!(table.get(handle).as_deref(), Some(&42));
    assert_eq!(table.values().len(), 1, "the losers' handles are removed");
}

#[test]
fn withdraw_ends_the_handle_and_empties_the_slot() {
    let table = HandleTable::new();
    let slot = AtomicUsize::new(0);
    let value = Arc::new(1);
    let other = table.insert(Arc::new(2)).unwrap();
    let handle = table.handle_in(&slot, &value, || false).unwrap();
    table.withdraw(&slot);
    assert_eq!(slot.load(SeqCst), 0);
    assert!(table.get(handle).is_none());
    // An empty slot withdraws nothing; other entries are untouched.
    table.withdraw(&slot);
    assert_eq!(table.get(other).as_deref(), Some(&2));
    // A new request makes a new handle.
    let again = table.handle_in(&slot, &value, || false).unwrap();
    assert_ne!(again, handle);
    assert_eq!(table.get(again).as_deref(), Some(&1));
}
