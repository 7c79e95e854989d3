package dev.capstan;

/**
 * How a tool runs: per-call timeout, output cap and {@code CAPSTAN_TOOL_*} flags. Immutable; the
 * {@code with}-methods return a copy.
 *
 * @param timeoutMs per-call timeout in milliseconds, 0 = none
 * @param maxOutputChars cap on the result text in characters, 0 = none
 * @param requiresApproval calls wait for the registry's approver ({@link Registry#setApprover})
 * @param serial never runs concurrently with itself
 */
public record ToolOptions(int timeoutMs, int maxOutputChars, boolean requiresApproval, boolean serial) {
    public static final ToolOptions DEFAULTS = new ToolOptions(0, 0, false, false);

    public ToolOptions withTimeoutMs(int ms) {
        return new ToolOptions(ms, maxOutputChars, requiresApproval, serial);
    }

    public ToolOptions withMaxOutputChars(int n) {
        return new ToolOptions(timeoutMs, n, requiresApproval, serial);
    }

    public ToolOptions withRequiresApproval(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, b, serial);
    }

    public ToolOptions withSerial(boolean b) {
        return new ToolOptions(timeoutMs, maxOutputChars, requiresApproval, b);
    }

    int flags() {
        return (requiresApproval ? 1 : 0) | (serial ? 2 : 0);
    }
}
