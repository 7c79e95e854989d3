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
 */
public record ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial,
        boolean mainThread, boolean waitForResponse, boolean deferred) {
    public static final ToolOptions DEFAULTS = new ToolOptions(0, 0, false, false, false, false, false);

    /** The options of earlier versions (no main-thread, wait-for-response or deferred flag). */
    public ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial) {
        this(timeoutMs, maxOutputChars, requiresApproval, serial, false, false, false);
    }

    public ToolOptions withTimeoutMs(int ms) {
        return new ToolOptions(ms, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse, deferred);
    }

    public ToolOptions withMaxOutputChars(int n) {
        return new ToolOptions(timeoutMs, n, requiresApproval, serial, mainThread, waitForResponse, deferred);
    }

    public ToolOptions withRequiresApproval(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, b, serial, mainThread, waitForResponse, deferred);
    }

    public ToolOptions withSerial(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, b, mainThread, waitForResponse, deferred);
    }

    public ToolOptions withMainThread(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, b, waitForResponse, deferred);
    }

    public ToolOptions withWaitForResponse(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, b, deferred);
    }

    public ToolOptions withDeferred(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, serial, mainThread, waitForResponse, b);
    }

    int flags() {
        return (requiresApproval ? 1 : 0) | (serial ? 2 : 0) | (mainThread ? 4 : 0) | (waitForResponse ? 8 : 0)
                | (deferred ? 16 : 0);
    }
}
