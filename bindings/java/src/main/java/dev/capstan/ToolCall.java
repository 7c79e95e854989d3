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

    ToolCall(MemorySegment call, String id, String tool, String argumentsJson) {
        this.call = call;
        this.id = id;
        this.tool = tool;
        this.argumentsJson = argumentsJson;
    }

    public String id() {
        return id;
    }

    public String tool() {
        return tool;
    }

    /** The validated arguments as compact JSON text. */
    public String argumentsJson() {
        return argumentsJson;
    }

    /** The validated arguments, an object node. */
    public synchronized JsonNode arguments() {
        if (arguments == null) arguments = Json.read(argumentsJson);
        return arguments;
    }

    /** The arguments bound to {@code type} (a record, a POJO, a Map) by Jackson. */
    public <T> T argumentsAs(Class<T> type) {
        return Json.MAPPER.convertValue(arguments(), type);
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
