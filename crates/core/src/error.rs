//! Errors of the core. `src/ffi` maps each variant to one `capstan_status`.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// An argument of an API call was out of range or of the wrong form.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A tool name that no provider accepts.
    #[error("invalid tool name: {0}")]
    InvalidName(String),
    /// A parameters schema that cannot be compiled or is not an object schema.
    #[error("invalid schema: {0}")]
    InvalidSchema(String),
    /// Calls JSON that is not JSON or not of the normalized shape.
    #[error("invalid calls: {0}")]
    InvalidCalls(String),
    /// Results JSON that is not JSON or not of the normalized shape.
    #[error("invalid results: {0}")]
    InvalidResults(String),
    /// A provider body that is not JSON or lacks what the format requires.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
    /// The provider's response reports an error instead of an answer (an API
    /// error body, a failed response, an error event, a JSON-RPC error):
    /// `kind` is the provider's own type, code or status, `message` its message.
    /// `detail` holds what the body says beyond that, where it says it.
    #[error("provider error ({kind}): {message}")]
    ProviderError {
        kind: String,
        message: String,
        detail: Box<ProviderDetail>,
    },
    /// Tool content declared as JSON that is not JSON.
    #[error("invalid content: {0}")]
    InvalidContent(String),
    /// A name that is not registered.
    #[error("not found: {0}")]
    NotFound(String),
    /// The call was already completed, timed out or cancelled.
    #[error("call already completed: {0}")]
    AlreadyCompleted(String),
    /// The handle does not (or no longer) name a live object.
    #[error("stale handle: {0}")]
    StaleHandle(String),
    /// A wait ran out of time.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The registry is shutting down.
    #[error("shutting down: {0}")]
    ShuttingDown(String),
    /// The operation is not allowed in the current context (e.g. from inside a callback).
    #[error("not allowed here: {0}")]
    WrongContext(String),
    /// A streamed response ended before its closing event (the connection
    /// closed early): calls not started were not run.
    #[error("stream truncated: {0}")]
    StreamTruncated(String),
    /// A stream held more bytes at once than its cap.
    #[error("stream too large: {0}")]
    StreamTooLarge(String),
    /// The library was built without the feature this function needs (e.g. `mcp`).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An MCP server could not be reached, started or initialized.
    #[error("MCP connection failed: {0}")]
    McpConnect(String),
    /// Internal failure: a poisoned lock, a closed channel, a runtime that could not start.
    #[error("internal error: {0}")]
    Internal(String),
    /// An MCP transport failed: the address could not be bound, stdio broke.
    #[error("transport error: {0}")]
    Transport(String),
}

/// What a provider's error report says beyond its message, each where the
/// provider sent it (read by `capstan_error_json`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProviderDetail {
    /// The error's type or status name: OpenAI's and Anthropic's `type`
    /// (`rate_limit_error`, `overloaded_error`), Gemini's `status`
    /// (`RESOURCE_EXHAUSTED`), a Gemini block reason (`SAFETY`).
    pub error_type: Option<String>,
    /// The error's `code` as text: OpenAI's (`rate_limit_exceeded`),
    /// Gemini's (`429`), a JSON-RPC error's (`-32602`).
    pub code: Option<String>,
    /// An HTTP status the body carries (a numeric `code` from 100 to 599, as
    /// Gemini sends). A status only in the HTTP response is the host's.
    pub http_status: Option<u16>,
    /// How long the provider asks to wait before retrying, in milliseconds,
    /// when the body says it (Gemini's `RetryInfo.retryDelay`). A
    /// `Retry-After` header is the host's to read.
    pub retry_after_ms: Option<u64>,
}

impl Error {
    /// A provider error without details beyond kind and message.
    pub fn provider(kind: impl Into<String>, message: impl Into<String>) -> Error {
        Error::ProviderError {
            kind: kind.into(),
            message: message.into(),
            detail: Box::default(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
