//! The tasks' bound in bytes (`max_task_bytes`, issue 45 finding 10): what
//! an entry holds is counted as JSON text, and room is made by dropping
//! ended tasks' results, oldest first, each replaced by a tool error that
//! says so.

use std::collections::HashMap;

use rmcp::model::TaskPayload;

use super::{to_object, Entry, Tasks};

impl Tasks {
    /// Makes room for `need` more bytes in the table: ended tasks' results
    /// are dropped, oldest first, until the bytes held and `need` fit
    /// `max_bytes`. False when they cannot (what is left is held by tasks
    /// waiting for input).
    pub(super) fn make_room(&self, entries: &mut HashMap<String, Entry>, need: usize) -> bool {
        let mut held: usize = entries.values().map(|e| e.bytes).sum();
        // Nothing is dropped in vain: only if dropping can make room at all.
        let waiting: usize = entries
            .values()
            .filter(|e| e.end.is_none())
            .map(|e| e.bytes)
            .sum();
        if waiting.saturating_add(need) > self.max_bytes {
            return false;
        }
        while held.saturating_add(need) > self.max_bytes {
            let oldest = entries
                .values_mut()
                .filter(|e| e.bytes > 0)
                .filter_map(|e| e.end.as_ref().map(|(_, at)| *at).map(|at| (at, e)))
                .min_by_key(|(at, _)| *at)
                .map(|(_, e)| e);
            let Some(entry) = oldest else {
                return false;
            };
            held -= entry.bytes;
            let text = format!(
                "The task's result ({} bytes) was dropped to make room for newer tasks' \
                 results: this server keeps at most {} bytes for its tasks (max_task_bytes).",
                entry.bytes, self.max_bytes
            );
            if let Some((payload, _)) = &mut entry.end {
                *payload = dropped_result(text);
            }
            entry.bytes = 0;
        }
        true
    }
}

/// A result dropped for `max_task_bytes`: the task completes with a tool
/// error saying so.
pub(super) fn dropped_result(text: String) -> TaskPayload {
    TaskPayload::Completed {
        result: to_object(&serde_json::json!({
            "content": [{"type": "text", "text": text}],
            "isError": true,
        })),
    }
}
