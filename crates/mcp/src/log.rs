//! Log messages over MCP (`Call::log`, `notifications/message`). A client
//! asks for them: a 2025-11-25 session with `logging/setLevel` (for the
//! session's later calls), a 2026-07-28 request with
//! `io.modelcontextprotocol/logLevel` in its `_meta` (for that call); a
//! client that did not ask gets none. Messages at the level asked for or
//! above are sent in order, each with the tool's name as its logger, all
//! before the call's result; at most [`QUEUED`] wait to be sent per call,
//! the ones past it are dropped. A call that became a task sends none after.
//!
//! MCP 2026-07-28 deprecates logging (SEP-2577), with sampling and roots;
//! clients of both eras still use it, and rmcp marks its types deprecated.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;

use super::progress::Forwarder;
use capstan_core::log::{LogLevel, LogListener};

/// Messages queued per call before newer ones are dropped.
const QUEUED: usize = 64;

/// A session's level (`logging/setLevel`), shared by its calls.
pub(crate) type SessionLevel = Arc<Mutex<Option<LogLevel>>>;

/// capstan's level for rmcp's.
pub(crate) fn level_of(level: LoggingLevel) -> Option<LogLevel> {
    match serde_json::to_value(level) {
        Ok(Value::String(name)) => LogLevel::parse(&name),
        _ => None,
    }
}

fn rmcp_level(level: LogLevel) -> Option<LoggingLevel> {
    serde_json::from_value(Value::String(level.as_str().to_owned())).ok()
}

/// The level the call's client asked for, if it asked.
pub(crate) fn requested(
    context: &RequestContext<RoleServer>,
    modern: bool,
    session: &SessionLevel,
) -> Option<LogLevel> {
    if modern {
        context.meta.log_level().and_then(level_of)
    } else {
        *session.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The listener to put in the call's `ExecOptions`, and what sends its
/// messages at `min` or above to the client, as from logger `tool`.
pub(crate) fn serve(
    context: &RequestContext<RoleServer>,
    min: LogLevel,
    tool: &str,
) -> (LogListener, Forwarder) {
    let peer: Peer<RoleServer> = context.peer.clone();
    let tool = tool.to_owned();
    let (tx, rx) = mpsc::channel::<(LogLevel, String)>(QUEUED);
    let forwarder = Forwarder::spawn(rx, move |(level, message): (LogLevel, String)| {
        let peer = peer.clone();
        let param = rmcp_level(level).map(|level| {
            let mut param = LoggingMessageNotificationParam::new(level, Value::String(message));
            param.logger = Some(tool.clone());
            param
        });
        async move {
            match param {
                Some(param) => peer.notify_logging_message(param).await.is_ok(),
                None => true,
            }
        }
    });
    let listener = LogListener(Arc::new(move |_, level: LogLevel, message: &str| {
        if level >= min {
            let _ = tx.try_send((level, message.to_owned()));
        }
    }));
    (listener, forwarder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_maps_to_rmcps_and_back() {
        for level in LogLevel::ALL {
            let theirs = rmcp_level(level).unwrap();
            assert_eq!(level_of(theirs), Some(level));
        }
    }
}
