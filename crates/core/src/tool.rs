//! What a registered tool is, apart from how it runs.

use serde_json::Value;

/// Flags of a tool (the bits of `capstan_tool_def.flags`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ToolFlags(pub u32);

/// cbindgen:ignore
impl ToolFlags {
    /// Never runs without approval.
    pub const REQUIRES_APPROVAL: u32 = 1;
    /// Not parallel-safe: never runs concurrently with itself.
    pub const SERIAL: u32 = 1 << 1;
    /// Runs only inside the host's pump, on the host's thread.
    pub const MAIN_THREAD: u32 = 1 << 2;
    /// Streams: never started before the whole response arrived.
    pub const WAIT_FOR_RESPONSE: u32 = 1 << 3;
    /// Left out of provider exports until the search tool finds it (issue #32).
    pub const DEFERRED: u32 = 1 << 4;
    /// Quick and run by the host on its own thread: a host batch
    /// (`exec::host`) hands its calls out, checked, instead of running the
    /// callback; every other path runs the callback as usual.
    pub const HOST_RUN: u32 = 1 << 5;
    /// Safe to run twice: a journal re-runs a call of it whose outcome a
    /// crash left unknown (issue #47); other tools' such calls fail.
    pub const IDEMPOTENT: u32 = 1 << 7;
    /// Registration only (not kept on the tool): replace a tool of the same
    /// name instead of refusing the registration (issue #49).
    pub const REPLACE: u32 = 1 << 8;
    pub const KNOWN: u32 = Self::REQUIRES_APPROVAL
        | Self::SERIAL
        | Self::MAIN_THREAD
        | Self::WAIT_FOR_RESPONSE
        | Self::DEFERRED
        | Self::HOST_RUN
        | Self::IDEMPOTENT
        | Self::REPLACE;

    pub fn requires_approval(self) -> bool {
        self.0 & Self::REQUIRES_APPROVAL != 0
    }
    pub fn serial(self) -> bool {
        self.0 & Self::SERIAL != 0
    }
    pub fn main_thread(self) -> bool {
        self.0 & Self::MAIN_THREAD != 0
    }
    pub fn wait_for_response(self) -> bool {
        self.0 & Self::WAIT_FOR_RESPONSE != 0
    }
    pub fn deferred(self) -> bool {
        self.0 & Self::DEFERRED != 0
    }
    pub fn host_run(self) -> bool {
        self.0 & Self::HOST_RUN != 0
    }

    pub fn idempotent(self) -> bool {
        self.0 & Self::IDEMPOTENT != 0
    }
}

/// The describable part of a tool: what providers and `describe` export.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the arguments, as registered.
    pub parameters: Value,
    pub flags: ToolFlags,
    pub timeout_ms: u32,
    pub max_output_chars: u32,
    /// What registration noticed and let pass (e.g. a `default` that fails its
    /// own schema, never filled in), each naming a JSON Pointer in `parameters`.
    pub warnings: Vec<String>,
    /// MCP's title, annotations, outputSchema and icons (see `tool_meta`).
    pub mcp: crate::tool_meta::McpMeta,
}
