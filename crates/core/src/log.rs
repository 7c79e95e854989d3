//! Log messages a running call sends (MCP's `notifications/message`): a
//! level and a text. They go to the registry's event hook
//! (`EventKind::Log`) and to the batch's log listener (`ExecOptions::log`),
//! which capstan's MCP server sets for a client that asked for logs (a
//! legacy session's `logging/setLevel`, a 2026-07-28 request's
//! `io.modelcontextprotocol/logLevel`), sending those at its level or above.
//!
//! Rules: the message is at most [`MAX_LOG_BYTES`]; one after the call has
//! its result is `AlreadyCompleted`.

use std::fmt;
use std::sync::Arc;

use crate::error::Error;

/// A log message longer than this (in bytes) is refused.
/// cbindgen:ignore
pub const MAX_LOG_BYTES: usize = 65536;

/// The syslog severities MCP uses (RFC 5424), least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// cbindgen:ignore
impl LogLevel {
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// MCP's name of the level ("debug" ... "emergency").
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The level numbered `n` (0 = debug ... 7 = emergency), as the C ABI
    /// numbers them.
    pub fn from_index(n: u32) -> Option<LogLevel> {
        LogLevel::ALL.get(n as usize).copied()
    }

    pub fn index(self) -> u32 {
        self as u32
    }
}

/// Checks a message against the rules above.
pub(crate) fn check(message: &str) -> Result<(), Error> {
    if message.len() > MAX_LOG_BYTES {
        return Err(Error::InvalidArgument(format!(
            "log message is {} bytes, more than {MAX_LOG_BYTES}",
            message.len()
        )));
    }
    Ok(())
}

/// Hears the log messages of a batch's calls: `(index of the call in its
/// batch, level, message)`. Runs on the thread that logged; must be quick.
#[derive(Clone)]
pub struct LogListener(pub LogFn);

/// What a [`LogListener`] runs.
pub type LogFn = Arc<dyn Fn(usize, LogLevel, &str) + Send + Sync>;

impl fmt::Debug for LogListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LogListener")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_named_as_mcp_names_them() {
        assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Alert < LogLevel::Emergency);
        for (n, level) in LogLevel::ALL.into_iter().enumerate() {
            assert_eq!(LogLevel::from_index(n as u32), Some(level));
            assert_eq!(LogLevel::parse(level.as_str()), Some(level));
            assert_eq!(level.index(), n as u32);
        }
        assert_eq!(LogLevel::from_index(8), None);
        assert_eq!(LogLevel::parse("warn"), None);
        assert!(check(&"x".repeat(MAX_LOG_BYTES)).is_ok());
        assert!(check(&"x".repeat(MAX_LOG_BYTES + 1)).is_err());
    }
}
