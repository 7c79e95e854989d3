//! Which process wrote a `started` record, and whether it is still running,
//! so that a call another live process started reads as "in progress
//! elsewhere" rather than "outcome unknown". On Linux a process is named by
//! the machine's boot id, its pid and its start time (so a reused pid is
//! not taken for the process that wrote the record); elsewhere, and for a
//! process of another machine, no owner is known and a `started` without
//! `completed` follows the tool's policy as after a crash.

use std::sync::Mutex;

/// This process as an owner (`None` where it cannot be named).
pub(crate) fn this_process() -> Option<String> {
    static CACHE: Mutex<Option<(u32, Option<String>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    // Keyed by pid: a forked child is another process.
    if let Some((p, owner)) = cache.as_ref() {
        if *p == pid {
            return owner.clone();
        }
    }
    let owner = (|| {
        let (_, start) = stat(pid)?;
        Some(format!("linux:{}:{pid}:{start}", boot_id()?))
    })();
    *cache = Some((pid, owner.clone()));
    owner
}

/// Whether the process `owner` names runs now (on this machine, not a
/// zombie, the same start time).
pub(crate) fn is_running(owner: &str) -> bool {
    let mut parts = owner.split(':');
    let (Some("linux"), Some(boot), Some(pid), Some(start), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    if boot_id().as_deref() != Some(boot) {
        return false;
    }
    matches!(stat(pid), Some((state, s)) if s == start && state != 'Z' && state != 'X')
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_string())
}

/// A process's state letter and start time (clock ticks since boot), from
/// `/proc/PID/stat`: the fields after the command's closing parenthesis.
fn stat(pid: u32) -> Option<(char, String)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (state) is the first here; field 22 (starttime) the 20th.
    let state = fields.first()?.chars().next()?;
    Some((state, fields.get(19)?.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_runs_and_a_dead_or_reused_one_does_not() {
        let me = this_process().expect("named on Linux");
        assert!(is_running(&me), "{me}");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let (_, start) = stat(pid).unwrap_or(('R', "0".into()));
        child.wait().unwrap();
        let boot = boot_id().unwrap();
        assert!(!is_running(&format!("linux:{boot}:{pid}:{start}")));
        // The same pid with another start time is another process.
        let (_, mine) = stat(std::process::id()).unwrap();
        let other = format!("linux:{boot}:{}:{}1", std::process::id(), mine);
        assert!(!is_running(&other));
        assert!(!is_running("linux:another-boot:1:1"));
        assert!(!is_running("not an owner"));
    }
}
