package dev.capstan;

import java.util.Map;
import java.util.stream.Collectors;

/**
 * Thrown by a tool (or completing its future) to ask its caller for input instead of answering (MCP 2026-07-28
 * multi round-trip requests; {@code capstan_call_require_input}):
 *
 * <pre>{@code
 * reg.tool("greet", "Greets the user by name.", "{\"type\":\"object\"}", call -> {
 *     JsonNode answer = call.input().path("inputResponses").path("name");
 *     if (!answer.path("action").asText().equals("accept")) {
 *         throw new InputRequiredException(Map.of("name", Map.of("method", "elicitation/create",
 *                 "params", Map.of("message", "What is your name?", "requestedSchema", Map.of("type", "object",
 *                         "properties", Map.of("name", Map.of("type", "string"))))))), "asked-name");
 *     }
 *     return "Hello, " + answer.path("content").path("name").asText() + "!";
 * });
 * }</pre>
 *
 * <p>{@code requests}: by key (at most 32), each {@code {"method": "elicitation/create" | "sampling/createMessage"
 * | "roots/list", "params": {...}}}, anything Jackson writes as that JSON object; {@code state}: the tool's own
 * text (at most 64 KiB), back in the next round's {@code call.input().get("requestState")}, sealed by capstan on
 * the way. Only an MCP client calling a served tool can be asked, and only what it declared
 * ({@code call.input().get("canAsk")}); for any other caller the call ends as a tool error saying why. Not a
 * {@link CapstanException}: it is the tool's answer, not a failure.
 */
public class InputRequiredException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient Map<String, ?> requests;
    private final String state;

    public InputRequiredException(Map<String, ?> requests, String state) {
        super(message(requests));
        this.requests = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(requests));
        this.state = state;
    }

    /** Asks with {@code requests} and no state. */
    public InputRequiredException(Map<String, ?> requests) {
        this(requests, null);
    }

    /** The requests by key. */
    public Map<String, ?> requests() {
        return requests;
    }

    /** The tool's state for the next round, or null. */
    public String state() {
        return state;
    }

    private static String message(Map<String, ?> requests) {
        if (requests == null) throw new NullPointerException("requests");
        String asked = requests.entrySet().stream()
                .map(e -> e.getKey() + " (" + method(e.getValue()) + ")")
                .collect(Collectors.joining(", "));
        return "the tool asked for input (" + (asked.isEmpty() ? "another round" : asked)
                + "), which its caller cannot give";
    }

    private static String method(Object request) {
        Object m = request instanceof Map<?, ?> map ? map.get("method")
                : request instanceof com.fasterxml.jackson.databind.JsonNode n && n.path("method").isTextual()
                        ? n.get("method").asText() : null;
        return m instanceof String s ? s : "?";
    }
}
