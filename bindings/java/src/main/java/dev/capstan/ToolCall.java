package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.foreign.MemorySegment;

/**
 * One call of a tool, as its handler sees it: the id, the tool's name and the validated arguments
 * (schema defaults filled in). Valid for the handler's run (an async handler may keep it until its future
 * completes).
 */
public final class ToolCall {
    private final MemorySegment call;
    private final String id;
    private final String tool;
    private final String argumentsJson;
    private JsonNode arguments;
    private JsonNode input;

    ToolCall(MemorySegment call, String id, String tool, String argumentsJson) {
        this.call = call;
        this.id = id;
        this.tool = tool;
        this.argumentsJson = argumentsJson;
    }

    /** A quick tool's call (a host batch's): no capstan_call, the arguments already parsed. */
    ToolCall(String id, String tool, JsonNode arguments) {
        this.call = MemorySegment.NULL;
        this.id = id;
        this.tool = tool;
        this.argumentsJson = null;
        this.arguments = arguments;
    }

    public String id() {
        return id;
    }

    public String tool() {
        return tool;
    }

    /** The validated arguments as compact JSON text. */
    public String argumentsJson() {
        return argumentsJson != null ? argumentsJson : arguments.toString();
    }

    /** The validated arguments, an object node. */
    public synchronized JsonNode arguments() {
        if (arguments == null) arguments = Json.read(argumentsJson);
        return arguments;
    }

    /** The arguments bound to {@code type} (a record, a POJO, a Map) by Jackson. */
    public <T> T argumentsAs(Class<T> type) {
        String text;
        synchronized (this) {
            if (arguments != null) return Json.MAPPER.convertValue(arguments, type);
            text = argumentsJson;
        }
        try { // straight from the text: one pass, no tree in between
            return Json.MAPPER.readValue(text, type);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(e.getMessage(), e); // as convertValue throws it
        }
    }

    /**
     * Reports the call's progress ({@code capstan_call_progress}): {@code progress} so far out of {@code total}
     * (0: unknown), with an optional {@code message}. It reaches the registry's event hook as a
     * {@link ToolEvent.Kind#PROGRESS} event, on this thread before this returns, and an MCP client whose request
     * carried a {@code progressToken} as {@code notifications/progress}. Any thread, until the call has its
     * result.
     *
     * @return true when reported, false once the call has its result (timed out, cancelled, returned)
     * @throws CapstanException INVALID_ARGUMENT for a value not finite, negative or not above the previous
     *     report, a negative total or a message over 4096 bytes
     */
    public boolean progress(double progress, double total, String message) {
        try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment m = message == null ? MemorySegment.NULL : Native.utf8(a, message);
            long len = message == null ? 0 : Native.utf8Len(m);
            int st = (int) Native.call_progress.invokeExact(call, progress, total, m, len);
            if (st == Native.ERR_ALREADY_COMPLETED || st == Native.ERR_STALE_HANDLE) return false;
            Native.check(st);
            return true;
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@link #progress(double, double, String)} with an unknown total and no message. */
    public boolean progress(double progress) {
        return progress(progress, 0, null);
    }

    /**
     * Sends a log message of the running call ({@code capstan_call_log}) at {@code level}. It reaches the
     * registry's event hook as a {@link ToolEvent.Kind#LOG} event, on this thread before this returns, and an MCP
     * client that asked for logs at or below {@code level} as {@code notifications/message}. Any thread, until
     * the call has its result.
     *
     * @return true when sent, false once the call has its result (timed out, cancelled, returned)
     * @throws NullPointerException for a null level or message
     * @throws CapstanException INVALID_ARGUMENT for a message over 64 KiB
     */
    public boolean log(LogLevel level, String message) {
        java.util.Objects.requireNonNull(level, "level");
        java.util.Objects.requireNonNull(message, "message");
        try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment m = Native.utf8(a, message);
            int st = (int) Native.call_log.invokeExact(call, level.ordinal(), m, Native.utf8Len(m));
            if (st == Native.ERR_ALREADY_COMPLETED || st == Native.ERR_STALE_HANDLE) return false;
            Native.check(st);
            return true;
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * {@link #log(LogLevel, String)} at the level of MCP's name ({@code "debug"}, {@code "info"},
     * {@code "notice"}, {@code "warning"}, {@code "error"}, {@code "critical"}, {@code "alert"},
     * {@code "emergency"}).
     *
     * @throws IllegalArgumentException for any other name, before anything is sent
     */
    public boolean log(String level, String message) {
        return log(LogLevel.ofMcpName(level), message);
    }

    /**
     * What the caller gave besides the arguments ({@code capstan_call_input}), an object node: {@code canAsk},
     * the methods the tool may ask it for by throwing {@link InputRequiredException} (empty unless an MCP client
     * calls a served tool), and in a later round {@code inputResponses} (the client's answers by the keys the tool
     * asked with, as sent: check them) and {@code requestState} (the tool's own state from the round before,
     * checked intact). Read while the call is open ({@code {"canAsk":[]}} once it has its result).
     */
    public synchronized JsonNode input() {
        if (input == null) {
            String text = null;
            try {
                text = Native.lent(Native.call_input, call);
            } catch (Throwable t) {
                // not live: nothing to read
            }
            JsonNode n = text == null || text.isEmpty() ? null : Json.read(text);
            input = n != null && n.isObject() ? n : Json.read("{\"canAsk\":[]}");
        }
        return input;
    }

    /** True once the call should stop (timed out, batch cancelled, registry closed). */
    public boolean cancelled() {
        try {
            return (boolean) Native.call_cancelled.invokeExact(call);
        } catch (Throwable t) {
            return true;
        }
    }
}
