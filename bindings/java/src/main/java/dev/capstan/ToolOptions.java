package dev.capstan;

/**
 * How a tool runs: per-call timeout, output cap and {@code CAPSTAN_TOOL_*} flags. Immutable; the
 * {@code with}-methods return a copy.
 *
 * @param timeoutMs per-call timeout in milliseconds, 0 = none
 * @param maxOutputChars cap on the result text in characters (each text part of content parts), 0 = none
 * @param requiresApproval calls wait for the registry's approver ({@link Registry#setApprover})
 * @param serial never runs concurrently with itself
 * @param mainThread runs only on a main thread of the registry: inside {@link Registry#pump}, or on a thread
 *     that pumped while it waits for the call's batch (for UI toolkits whose objects belong to one thread)
 * @param waitForResponse streams: never starts before the whole response arrived, even with early dispatch
 *     (for tools with side effects)
 * @param deferred left out of the provider exports ({@link Registry#toolsJson}) until the search tool
 *     ({@link Registry#addSearchTool}) found it; callable at any time
 * @param mcpMeta MCP metadata of the tool as JSON text ({@code capstan_tool_def.mcp_meta}): an object with any
 *     of {@code title}, {@code annotations}, {@code outputSchema}, {@code icons}; null = none
 * @param quick the handler is quick and runs on the thread that calls {@link Registry#execute}
 *     ({@code CAPSTAN_TOOL_HOST_RUN}): capstan checks the calls and hands them to the binding in one buffer, the
 *     binding runs them in call order and hands every result back in one (no upcall, no arena per call; an
 *     {@link Tool} method's arguments bound straight from capstan's text to its parameters); other tools of the
 *     batch run on capstan's pool meanwhile. Not for tools that block or wait (I/O), nor for
 *     handlers that need the call's progress, log or input (a quick call has no capstan_call)
 * @param idempotent safe to run twice with the same arguments ({@code CAPSTAN_TOOL_IDEMPOTENT}): with a journal
 *     ({@link Registry#setJournal}), a call of this tool that started in an earlier process and never
 *     completed (a crash) runs again; without it such a call fails with content beginning "Outcome unknown:"
 * @param replace replace a tool of the same name ({@code CAPSTAN_TOOL_REPLACE}); without it, registering a
 *     name already registered throws {@link CapstanException} INVALID_ARGUMENT naming the tool
 */
public record ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial,
        boolean mainThread, boolean waitForResponse, boolean deferred, String mcpMeta, boolean quick,
        boolean idempotent, boolean replace) {
    public static final ToolOptions DEFAULTS =
            new ToolOptions(0, 0, false, false, false, false, false, null, false, false, false);

    /** The options without the replace flag (the record's shape before {@code replace}). */
    public ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial,
            boolean mainThread, boolean waitForResponse, boolean deferred, String mcpMeta, boolean quick,
            boolean idempotent) {
        this(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse, deferred, mcpMeta,
                quick, idempotent, false);
    }

    /** The options without the idempotent flag (the record's shape before the journal). */
    public ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial,
            boolean mainThread, boolean waitForResponse, boolean deferred, String mcpMeta, boolean quick) {
        this(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse, deferred, mcpMeta,
                quick, false);
    }

    /** The options without the quick flag (the record's shape before {@code quick}). */
    public ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial,
            boolean mainThread, boolean waitForResponse, boolean deferred, String mcpMeta) {
        this(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse, deferred, mcpMeta, false);
    }

    /** The options without MCP metadata (the record's shape before {@code mcpMeta}). */
    public ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial,
            boolean mainThread, boolean waitForResponse, boolean deferred) {
        this(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse, deferred, null);
    }

    /** The options of earlier versions (no main-thread, wait-for-response or deferred flag). */
    public ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial) {
        this(timeoutMs, maxOutputChars, requiresApproval, serial, false, false, false);
    }

    public ToolOptions withTimeoutMs(int ms) {
        return new ToolOptions(ms, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse, deferred, mcpMeta, quick, idempotent, replace);
    }

    public ToolOptions withMaxOutputChars(int n) {
        return new ToolOptions(timeoutMs, n, requiresApproval, serial, mainThread, waitForResponse, deferred, mcpMeta, quick, idempotent, replace);
    }

    public ToolOptions withRequiresApproval(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, b, serial, mainThread, waitForResponse, deferred, mcpMeta, quick, idempotent, replace);
    }

    public ToolOptions withSerial(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, b, mainThread, waitForResponse, deferred, mcpMeta, quick, idempotent, replace);
    }

    public ToolOptions withMainThread(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, b, waitForResponse, deferred, mcpMeta, quick, idempotent, replace);
    }

    public ToolOptions withWaitForResponse(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, b, deferred, mcpMeta, quick, idempotent, replace);
    }

    public ToolOptions withDeferred(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse, b, mcpMeta, quick, idempotent, replace);
    }

    /**
     * MCP metadata, as {@code capstan_tool_def.mcp_meta}: {@code meta} is JSON text or anything Jackson writes
     * as an object (a Map, a record), with any of the MCP {@code Tool} fields {@code title} (string),
     * {@code annotations} ({@code readOnlyHint}, {@code destructiveHint}, {@code idempotentHint},
     * {@code openWorldHint}, {@code title}), {@code outputSchema} (a JSON Schema with {@code "type":"object"})
     * and {@code icons}. capstan's MCP server sends them in {@code tools/list}; {@link Registry#toolsJson} gives
     * them in {@link Format#MCP} and as {@code "mcp"} in {@link Format#DESCRIBE}. With an outputSchema, a result
     * that is a JSON object failing it is a tool error naming the failing places. Checked at registration: a
     * field of the wrong shape is INVALID_ARGUMENT naming it. null: none.
     */
    public ToolOptions withMcpMeta(Object meta) {
        String json = meta == null ? null : meta instanceof CharSequence cs ? cs.toString() : Json.write(meta);
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse,
                deferred, json, quick, idempotent, replace);
    }

    /** {@code quick}: see the record's doc. */
    public ToolOptions withQuick(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse,
                deferred, mcpMeta, b, idempotent, replace);
    }

    /** {@code idempotent}: see the record's doc. */
    public ToolOptions withIdempotent() {
        return withIdempotent(true);
    }

    public ToolOptions withIdempotent(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse,
                deferred, mcpMeta, quick, b, replace);
    }

    /** {@code replace}: see the record's doc. */
    public ToolOptions withReplace() {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse,
                deferred, mcpMeta, quick, idempotent, true);
    }

    int flags() {
        return (requiresApproval ? 1 : 0) | (serial ? 2 : 0) | (mainThread ? 4 : 0) | (waitForResponse ? 8 : 0)
                | (deferred ? 16 : 0) | (quick ? 32 : 0) | (idempotent ? 128 : 0)
                | (replace ? 1 << 8 : 0);
    }
}
