//! Big batches read and written on two threads (issue #46, item 6).
//!
//! A batch of many quick calls runs on every core, but reading its calls
//! (`CallRequest::list_from_str`) and writing its results
//! (`results_to_string`) ran on the caller's thread alone: half of a
//! trivial call's work, so a second core could not make a 10,000-call
//! batch much faster. Past a size where a pool thread's wake-up is a small
//! part of the work, each is cut in two: this thread does the first half, a
//! pool thread the second. The text and the calls are exactly those of the
//! one-thread path (the tests compare them); anything unusual (no pool
//! thread free, one core, malformed JSON) takes the one-thread path.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};

use serde::de::DeserializeOwned;

use crate::runtime::pool;

/// Calls text at least this long is read in two halves.
pub const SPLIT_CALLS_BYTES: usize = 32 * 1024;
/// At least this many results are written in two halves.
pub const SPLIT_RESULTS: usize = 512;

type Job<B> = Box<dyn FnOnce() -> B + Send>;

struct Other<B> {
    job: Mutex<Option<Job<B>>>,
    done: Mutex<Option<std::thread::Result<B>>>,
    ready: Condvar,
}

/// Whether this process may use a second thread for one batch's work: two
/// cores, and a pool allowed two threads (`capstan_runtime_configure`).
pub fn two_threads() -> bool {
    pool::cores() >= 2 && pool::threads() >= 2
}

/// Runs `here` on this thread while a pool thread runs `there`; returns both.
/// When no pool thread is free (or none took `there` by the time `here`
/// returned), this thread runs `there` too: nothing waits on a busy pool. A
/// panic in either goes on on this thread.
pub fn in_two<A, B: Send + 'static>(
    here: impl FnOnce() -> A,
    there: impl FnOnce() -> B + Send + 'static,
) -> (A, B) {
    let other = Arc::new(Other {
        job: Mutex::new(Some(Box::new(there) as Job<B>)),
        done: Mutex::new(None),
        ready: Condvar::new(),
    });
    let theirs = other.clone();
    // Handed back when every pool thread is busy: the job stays with us.
    let _ = pool::try_spawn(Box::new(move || {
        let job = theirs.job.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(job) = job {
            let result = catch_unwind(AssertUnwindSafe(job));
            *theirs.done.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            theirs.ready.notify_one();
        }
    }));
    let a = here();
    let job = other.job.lock().unwrap_or_else(|e| e.into_inner()).take();
    let b = match job {
        Some(job) => job(),
        None => {
            let mut done = other.done.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(result) = done.take() {
                    break result.unwrap_or_else(|p| resume_unwind(p));
                }
                done = other.ready.wait(done).unwrap_or_else(|e| e.into_inner());
            }
        }
    };
    (a, b)
}

/// The offset of a comma between two elements of the top-level JSON array
/// `text` (which starts with `[`, after any whitespace), the first such
/// comma at or past the middle; None if there is none (or `text` is not
/// shaped so: the caller then reads it whole). Strings are skipped with
/// their escapes; the elements' own nesting is followed with `[`/`{`.
pub fn middle_comma(text: &[u8]) -> Option<usize> {
    let mid = text.len() / 2;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in text.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.checked_sub(1)?,
            b',' if depth == 1 && i >= mid => return Some(i),
            _ => {}
        }
    }
    None
}

/// The elements of the big JSON array `text`, read in two halves on two
/// threads: exactly what reading it whole gives, or None to read it whole
/// (short, one core, no split point, either half not read: the one-thread
/// read then says what is wrong).
pub fn read_in_two<T: DeserializeOwned + Send + 'static>(text: &str) -> Option<Vec<T>> {
    if text.len() < SPLIT_CALLS_BYTES || !two_threads() {
        return None;
    }
    let at = middle_comma(text.as_bytes())?;
    let mut second = String::with_capacity(text.len() - at + 1);
    second.push('[');
    second.push_str(&text[at + 1..]);
    let (first, second) = in_two(
        || {
            let mut first = String::with_capacity(at + 1);
            first.push_str(&text[..at]);
            first.push(']');
            serde_json::from_str::<Vec<T>>(&first).ok()
        },
        move || serde_json::from_str::<Vec<T>>(&second).ok(),
    );
    let mut items = first?;
    items.extend(second?);
    Some(items)
}

/// `items` written as one JSON array, each by `write` (`size` estimates
/// its length), the second half on a pool thread; the items are freed as
/// they are written, each half on its thread.
pub fn write_in_two<T: Send + 'static>(
    mut items: Vec<T>,
    size: fn(&T) -> usize,
    write: fn(&mut Vec<u8>, &T),
) -> String {
    let second = items.split_off(items.len() / 2);
    let whole = items.iter().chain(&second).map(size).sum::<usize>() + 2;
    let (mut out, rest) = in_two(
        || {
            let mut out = Vec::with_capacity(whole);
            out.push(b'[');
            crate::wire::write_items(&mut out, &items, write);
            drop(items);
            out
        },
        move || {
            let mut out = Vec::with_capacity(second.iter().map(size).sum());
            crate::wire::write_items(&mut out, &second, write);
            out
        },
    );
    if out.len() > 1 && !rest.is_empty() {
        out.push(b',');
    }
    out.extend_from_slice(&rest);
    out.push(b']');
    crate::wire::into_string(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_middle_comma_is_between_top_level_elements() {
        let text = br#"[{"a":"x,]\"y"},[1,2],{"b":{"c":","}},"s,t",4]"#;
        let at = middle_comma(text).unwrap();
        assert!(at >= text.len() / 2);
        let (first, second) = (&text[..at], &text[at + 1..]);
        let mut whole: Vec<serde_json::Value> =
            serde_json::from_slice(&[first, b"]"].concat()).unwrap();
        let rest: Vec<serde_json::Value> =
            serde_json::from_slice(&[b"[", second].concat()).unwrap();
        whole.extend(rest);
        let expected: Vec<serde_json::Value> = serde_json::from_slice(text).unwrap();
        assert_eq!(whole, expected);
        // No top-level comma past the middle, or unbalanced: none.
        assert_eq!(
            middle_comma(br#"[1,{"long":"value past the middle"}]"#),
            None
        );
        assert_eq!(middle_comma(b"]]]],1,2"), None);
    }

    #[test]
    fn both_halves_run_and_a_busy_pool_leaves_the_work_here() {
        let (a, b) = in_two(|| 1 + 1, || "there".to_string());
        assert_eq!((a, b.as_str()), (2, "there"));
        // Many at once from many threads: every pair completes (some run
        // both halves here when no pool thread is free).
        let threads: Vec<_> = (0..8)
            .map(|t| {
                std::thread::spawn(move || {
                    (0..200)
                        .map(|i| (i, in_two(move || t * i, move || t + i)))
                        .all(|(i, (a, b))| a == t * i && b == t + i)
                })
            })
            .collect();
        assert!(threads.into_iter().all(|h| h.join().unwrap()));
    }

    #[test]
    fn a_big_array_read_in_two_is_the_array_read_whole() {
        let items: Vec<String> = (0..3_000)
            .map(|i| format!(r#"{{"s":"x{i},]\"[{{","n":[{i},{{"d":null}}]}}"#))
            .collect();
        let text = format!(" [{}] ", items.join(" , "));
        assert!(text.len() >= SPLIT_CALLS_BYTES);
        let whole: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        let halves = read_in_two::<serde_json::Value>(&text);
        if two_threads() {
            assert!(
                halves.as_ref() == Some(&whole),
                "read in two: the same elements"
            );
        }
        // Malformed past the middle: not read here (the caller reads it whole).
        assert!(read_in_two::<serde_json::Value>(&text[..text.len() - 30]).is_none());
        // Short: not split.
        assert!(read_in_two::<serde_json::Value>("[1,2,3]").is_none());
    }

    #[test]
    fn a_big_array_written_in_two_is_the_array_written_whole() {
        struct Item(String);
        fn size(s: &Item) -> usize {
            s.0.len() + 8
        }
        fn write(out: &mut Vec<u8>, s: &Item) {
            crate::wire::write_str(out, &s.0);
        }
        for n in [0, 1, 2, 3, 1_001] {
            let texts: Vec<String> = (0..n).map(|i| format!("item \"{i}\"")).collect();
            let expected = serde_json::to_string(&texts).unwrap();
            let items = texts.into_iter().map(Item).collect();
            assert_eq!(write_in_two(items, size, write), expected, "{n} items");
        }
    }

    #[test]
    fn a_panic_in_the_pool_half_reaches_the_caller() {
        let caught = catch_unwind(|| in_two(|| 0, || -> i32 { panic!("half") }));
        assert!(caught.is_err());
    }
}
