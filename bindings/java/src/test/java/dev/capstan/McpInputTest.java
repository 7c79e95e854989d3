package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Options.withInput: the host answers what a mounted server asks while running a tool. The server is capstan's
 * own, serving a Java tool that throws InputRequiredException; the mount answers for either protocol era, and a
 * host that gives no answer (or throws) fails the call as a tool error; the answerer is released once.
 */
class McpInputTest {
    static final Map<String, Object> ASK = Map.of("name", Map.of("method", "elicitation/create", "params",
            Map.of("message", "What is your name?", "requestedSchema", Map.of("type", "object", "properties",
                    Map.of("name", Map.of("type", "string")), "required", List.of("name")))));

    static Registry asker() {
        return new Registry().tool("ask_name", "Asks for a name, then greets it.", "{\"type\":\"object\"}", call -> {
            JsonNode answer = call.input().path("inputResponses").path("name");
            if (!answer.path("action").asText().equals("accept")) throw new InputRequiredException(ASK, "asked");
            return "Hello, " + answer.path("content").path("name").asText() + "!";
        });
    }

    record Asked(String tool, String method, JsonNode params) {}

    /** Mounts {@code url} with {@code o}, calls in_ask_name once, unmounts; the result. */
    static ToolResult callOnce(McpMount.Options o) {
        try (Registry reg = new Registry(); McpMount m = reg.mountMcp(o.withPrefix("in_"))) {
            return reg.execute(List.of(Call.of("1", "in_ask_name", Map.of()))).get(0);
        }
    }

    /** input_destroy runs once the mount lets go, maybe soon after on a capstan thread: wait for it, bounded. */
    static void awaitHandles(int atMost) throws InterruptedException {
        for (int i = 0; i < 200 && Native.liveHandles() > atMost; i++) Thread.sleep(50);
        assertEquals(atMost, Native.liveHandles(), "input_destroy did not run");
    }

    @Test
    void aServersInputRequestIsAnsweredByTheHostForEitherEra() throws Exception {
        try (Registry served = asker(); McpServer server = served.serveMcp(McpServer.Options.DEFAULTS)) {
            for (String version : Arrays.asList(null, "2025-11-25")) {
                int handles = Native.liveHandles();
                List<Asked> asked = new CopyOnWriteArrayList<>();
                McpMount.InputAnswerer answerer = (tool, method, params) -> {
                    asked.add(new Asked(tool, method, params));
                    return Map.of("action", "accept", "content", Map.of("name", "Ada"));
                };
                ToolResult r = callOnce(McpMount.Options.url(server.url()).withProtocolVersion(version)
                        .withInput(answerer));
                assertEquals(Outcome.OK, r.outcome(), r.content());
                assertEquals("Hello, Ada!", r.content());
                assertEquals(1, asked.size());
                // A 2026-07-28 request belongs to the call; an older one names none.
                if (version == null) {
                    assertEquals("in_ask_name", asked.get(0).tool());
                } else {
                    assertNull(asked.get(0).tool());
                }
                assertEquals("elicitation/create", asked.get(0).method());
                assertEquals("What is your name?", asked.get(0).params().path("message").asText());
                assertEquals("name", asked.get(0).params().path("requestedSchema").path("required").path(0).asText());
                awaitHandles(handles);
            }
        }
    }

    @Test
    void anAnswerMayComeLaterAsACompletionStage() throws Exception {
        try (Registry served = asker(); McpServer server = served.serveMcp(McpServer.Options.DEFAULTS)) {
            ToolResult r = callOnce(McpMount.Options.url(server.url()).withInput((tool, method, params) ->
                    CompletableFuture.supplyAsync(() -> Json.read("{\"action\":\"accept\",\"content\":{\"name\":\"Grace\"}}"))));
            assertEquals("Hello, Grace!", r.content());
        }
    }

    @Test
    void aHostThatGivesNoAnswerOrThrowsFailsTheCallSayingSo() throws Exception {
        try (Registry served = asker(); McpServer server = served.serveMcp(McpServer.Options.DEFAULTS)) {
            int handles = Native.liveHandles();
            List<McpMount.InputAnswerer> hosts = List.of(
                    (tool, method, params) -> null,
                    (tool, method, params) -> {
                        throw new java.io.IOException("the user closed the window");
                    },
                    (tool, method, params) -> CompletableFuture.failedFuture(new IllegalStateException("no user")),
                    (tool, method, params) -> new Object()); // Jackson cannot write it
            for (McpMount.InputAnswerer host : hosts) {
                ToolResult r = callOnce(McpMount.Options.url(server.url()).withInput(host));
                assertEquals(Outcome.TOOL_ERROR, r.outcome(), r.content());
                assertTrue(r.content().contains("the host gave no answer to elicitation/create"), r.content());
            }
            // An older server's request refused: the call still ends as an error, no crash.
            ToolResult old = callOnce(McpMount.Options.url(server.url()).withProtocolVersion("2025-11-25")
                    .withInput((tool, method, params) -> {
                        throw new IllegalStateException("x");
                    }));
            assertEquals(Outcome.TOOL_ERROR, old.outcome(), old.content());
            awaitHandles(handles);
        }
    }

    @Test
    void theMethodsAnsweredAreDeclaredAndBadOnesAreClearErrors() throws Exception {
        try (Registry served = asker(); McpServer server = served.serveMcp(McpServer.Options.DEFAULTS);
                Registry reg = new Registry()) {
            int handles = Native.liveHandles();
            // Without elicitation declared the tool cannot ask: the host is not asked.
            List<Asked> asked = new CopyOnWriteArrayList<>();
            ToolResult r = callOnce(McpMount.Options.url(server.url()).withInput((tool, method, params) -> {
                asked.add(new Asked(tool, method, params));
                return null;
            }, McpMount.InputMethod.ROOTS, McpMount.InputMethod.SAMPLING));
            assertEquals(Outcome.TOOL_ERROR, r.outcome(), r.content());
            assertEquals(List.of(), asked);

            IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                    () -> new McpMount.Input(null, Set.of(McpMount.InputMethod.ROOTS)));
            assertTrue(none.getMessage().contains("methods need an answerer"), none.getMessage());
            IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
                    () -> new McpMount.Input((tool, method, params) -> null, Set.of()));
            assertTrue(empty.getMessage().contains("at least one method"), empty.getMessage());
            IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                    () -> McpMount.InputMethod.of("ping"));
            assertTrue(unknown.getMessage().contains("unknown input method \"ping\""), unknown.getMessage());
            assertEquals(McpMount.InputMethod.ROOTS, McpMount.InputMethod.of("roots/list"));

            // A mount capstan fails still releases the answerer once.
            assertThrows(CapstanException.class, () -> reg.mountMcp(McpMount.Options.url("http://127.0.0.1:1/mcp")
                    .withConnectTimeoutMs(2000).withInput((tool, method, params) -> null)));
            awaitHandles(handles);
        }
    }
}
