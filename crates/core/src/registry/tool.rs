//! A registered tool: what it is (name, schema, flags, limits) and what the
//! registry keeps for the layer that runs it, without knowing its type.

use std::any::Any;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use super::activity::Alive;
use crate::error::Error;
use crate::observe::ToolStats;
use crate::schema::{Prepared, Schema};
use crate::tool::{ToolFlags, ToolSpec};
use crate::tool_meta::McpMeta;

/// What a tool runs with, as the layer above the registry defines it (the
/// executor's `Box<dyn Handler>`). The registry stores it and drops it (the
/// tool's "destroy") after the tool is gone and its calls are done; it never
/// calls it. Implemented by the executor alone.
pub trait Runnable: Any + Send + Sync {}

/// Everything needed to register a tool; `H` is what runs it (see
/// `exec::ToolDef`, the form every user writes).
pub struct ToolDef<H> {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
    pub handler: H,
    pub timeout_ms: u32,
    pub max_output_chars: u32,
    pub flags: ToolFlags,
}

/// What a tool is, apart from its schema and handler.
#[derive(Clone, Debug)]
pub struct ToolMeta {
    pub name: String,
    pub description: String,
    pub flags: ToolFlags,
    pub timeout_ms: u32,
    pub max_output_chars: u32,
}

/// A registered tool. Calls in flight keep it alive after it is replaced or removed.
///
/// The parameters schema is checked in full (compiled) at registration, but
/// kept as compact text; the compiled validator is built again on the tool's
/// first call and kept from then on. A compiled validator takes tens of
/// kilobytes: a registry of thousands of tools, few of them called, stays small.
pub struct Tool {
    pub meta: ToolMeta,
    parameters: Arc<str>,
    /// Defaults and warnings worked out at registration, reused by the first call.
    prepared: Prepared,
    schema: OnceLock<Schema>,
    /// A `Runnable`, dropped before `_alive`.
    handler: Box<dyn Any + Send + Sync>,
    serial_busy: Mutex<bool>,
    serial_free: Condvar,
    pub(crate) stats: Arc<ToolStats>,
    /// MCP metadata, and its `outputSchema` compiled (checked against each
    /// successful result's structured content).
    mcp: McpMeta,
    pub output_schema: Option<Arc<Schema>>,
    _alive: Alive,
}

impl Tool {
    /// Whether the tool may run as an MCP task (`execution.taskSupport`).
    pub fn task_support(&self) -> crate::tool_meta::TaskSupport {
        self.mcp.task_support()
    }

    pub(super) fn new<H: Runnable>(
        def: ToolDef<H>,
        schema: &Schema,
        mcp: (McpMeta, Option<Arc<Schema>>),
        stats: Arc<ToolStats>,
        alive: Alive,
    ) -> Tool {
        Tool {
            meta: ToolMeta {
                name: def.name,
                description: def.description,
                flags: def.flags,
                timeout_ms: def.timeout_ms,
                max_output_chars: def.max_output_chars,
            },
            parameters: def.parameters.to_string().into(),
            prepared: schema.prepared().clone(),
            schema: OnceLock::new(),
            handler: Box::new(def.handler),
            serial_busy: Mutex::new(false),
            serial_free: Condvar::new(),
            stats,
            mcp: mcp.0,
            output_schema: mcp.1,
            _alive: alive,
        }
    }

    /// What runs the tool, if it is an `H` (the executor's handler type).
    pub fn handler<H: Runnable>(&self) -> Option<&H> {
        self.handler.downcast_ref::<H>()
    }

    /// The compiled schema, built on first use.
    pub(crate) fn schema(&self) -> Result<&Schema, Error> {
        if let Some(schema) = self.schema.get() {
            return Ok(schema);
        }
        let value: serde_json::Value = serde_json::from_str(&self.parameters)
            .map_err(|e| Error::Internal(format!("stored schema is not JSON: {e}")))?;
        let schema = Schema::compile_prepared(&value, &self.prepared)?;
        Ok(self.schema.get_or_init(|| schema))
    }

    /// The schema as registered (compact JSON text).
    pub fn parameters_text(&self) -> &str {
        &self.parameters
    }

    /// The describable part of the tool.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.meta.name.clone(),
            description: self.meta.description.clone(),
            parameters: serde_json::from_str(&self.parameters).unwrap_or(serde_json::Value::Null),
            flags: self.meta.flags,
            timeout_ms: self.meta.timeout_ms,
            max_output_chars: self.meta.max_output_chars,
            warnings: self.prepared.warnings().to_vec(),
            mcp: self.mcp.clone(),
        }
    }

    /// For serial tools, blocks until no other call of this tool is running.
    pub(crate) fn enter(&self) {
        if !self.meta.flags.serial() {
            return;
        }
        let Ok(mut busy) = self.serial_busy.lock() else {
            return;
        };
        while *busy {
            busy = match self.serial_free.wait(busy) {
                Ok(b) => b,
                Err(_) => return,
            };
        }
        *busy = true;
    }

    pub(crate) fn leave(&self) {
        if !self.meta.flags.serial() {
            return;
        }
        if let Ok(mut busy) = self.serial_busy.lock() {
            *busy = false;
        }
        self.serial_free.notify_one();
    }
}
