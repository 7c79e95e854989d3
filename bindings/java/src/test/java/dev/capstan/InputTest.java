package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A Java tool asking its caller for input (throw InputRequiredException; read ToolCall.input()): a stateless
 * 2026-07-28 MCP client, played here with plain HTTP POSTs, gets the requests and a sealed requestState,
 * answers, and the tool sees the answers and its own state; a tampered state never reaches the tool. Any other
 * caller cannot be asked: the call is a tool error saying why.
 */
class InputTest {
    static final Map<String, Object> ASK = Map.of("name", Map.of("method", "elicitation/create", "params",
            Map.of("message", "What is your name?", "requestedSchema", Map.of("type", "object", "properties",
                    Map.of("name", Map.of("type", "string")), "required", List.of("name")))));

    static Object greet(ToolCall call, List<JsonNode> seen) {
        JsonNode input = call.input();
        seen.add(input);
        JsonNode answer = input.path("inputResponses").path("name");
        if (!answer.path("action").asText().equals("accept")) throw new InputRequiredException(ASK, "asked-name");
        return "Hello, " + answer.path("content").path("name").asText() + "! ("
                + input.path("requestState").asText() + ")";
    }

    /** {@code greet} (sync) and {@code greetLater} (its future fails with the exception, on another thread). */
    static Registry greeter(List<JsonNode> seen) {
        return new Registry()
                .tool("greet", "Greets the user by name.", "{\"type\":\"object\"}", call -> greet(call, seen))
                .asyncTool("greetLater", "Greets the user by name, later.", "{\"type\":\"object\"}",
                        call -> CompletableFuture.supplyAsync(() -> greet(call, seen)));
    }

    /** One stateless 2026-07-28 tools/call (tests/mcp_server/input.rs call_modern). */
    static JsonNode callModern(String url, String name, List<String> capabilities, Map<String, Object> extra)
            throws Exception {
        Map<String, Object> declared = new LinkedHashMap<>();
        for (String c : capabilities) declared.put(c, Map.of());
        Map<String, Object> params = new LinkedHashMap<>(Map.of("name", name, "arguments", Map.of()));
        params.putAll(extra);
        params.put("_meta", Map.of("io.modelcontextprotocol/protocolVersion", "2026-07-28",
                "io.modelcontextprotocol/clientInfo", Map.of("name", "raw", "version", "1"),
                "io.modelcontextprotocol/clientCapabilities", declared));
        String body = Json.write(Map.of("jsonrpc", "2.0", "id", 9, "method", "tools/call", "params", params));
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", name)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        try (HttpClient client = HttpClient.newHttpClient()) {
            String text = client.send(request, HttpResponse.BodyHandlers.ofString()).body();
            String data = text.lines().filter(l -> l.startsWith("data: {")).findFirst().map(l -> l.substring(6))
                    .orElse(text);
            return Json.read(data);
        }
    }

    @Test
    void aModernClientAnswersWhatAJavaToolAsksAndTheToolSeesTheAnswersAndItsState() throws Exception {
        for (String tool : List.of("greet", "greetLater")) {
            List<JsonNode> seen = Collections.synchronizedList(new ArrayList<>());
            try (Registry reg = greeter(seen); McpServer server = reg.serveMcp(McpServer.Options.DEFAULTS)) {
                JsonNode first = callModern(server.url(), tool, List.of("elicitation", "sampling", "roots"), Map.of());
                JsonNode result = first.path("result");
                assertEquals("input_required", result.path("resultType").asText(), first.toString());
                assertEquals("elicitation/create", result.path("inputRequests").path("name").path("method").asText());
                assertEquals("What is your name?",
                        result.path("inputRequests").path("name").path("params").path("message").asText());
                assertTrue(result.path("content").isMissingNode(), first.toString());
                String sealed = result.path("requestState").asText();
                assertFalse(sealed.isEmpty(), first.toString());
                assertFalse(sealed.contains("asked-name"), "the state travels sealed: " + sealed);
                assertEquals(Json.read("{\"canAsk\":[\"elicitation/create\",\"sampling/createMessage\",\"roots/list\"]}"),
                        seen.get(0));

                Map<String, Object> answers = Map.of("name", Map.of("action", "accept", "content", Map.of("name", "Ada")));
                JsonNode second = callModern(server.url(), tool, List.of("elicitation"),
                        Map.of("inputResponses", answers, "requestState", sealed));
                assertNotEquals(true, second.path("result").path("isError").asBoolean(false), second.toString());
                assertEquals("Hello, Ada! (asked-name)",
                        second.path("result").path("content").get(0).path("text").asText(), second.toString());
                assertEquals(Json.MAPPER.valueToTree(answers), seen.get(1).path("inputResponses"));
                assertEquals("asked-name", seen.get(1).path("requestState").asText());

                char last = sealed.charAt(sealed.length() - 1) == 'A' ? 'B' : 'A';
                JsonNode tampered = callModern(server.url(), tool, List.of("elicitation"), Map.of("inputResponses",
                        answers, "requestState", sealed.substring(0, sealed.length() - 1) + last));
                assertEquals(-32602, tampered.path("error").path("code").asInt(), tampered.toString());
                assertTrue(tampered.path("error").path("message").asText()
                        .contains("requestState failed its integrity check"), tampered.toString());
                assertEquals(2, seen.size(), "the tool never ran on the refused round");
            }
        }
    }

    @Test
    void aClientThatDidNotDeclareTheCapabilityGetsMissingRequiredClientCapability() throws Exception {
        // The tool's ask is refused and it fails: a 2026-07-28 client gets
        // -32021 naming what the tool needed.
        List<JsonNode> seen = Collections.synchronizedList(new ArrayList<>());
        try (Registry reg = greeter(seen); McpServer server = reg.serveMcp(McpServer.Options.DEFAULTS)) {
            JsonNode answer = callModern(server.url(), "greet", List.of("sampling"), Map.of());
            assertEquals(-32021, answer.path("error").path("code").asInt(), answer.toString());
            assertEquals(Json.read("{\"elicitation\":{}}"),
                    answer.path("error").path("data").path("requiredCapabilities"), answer.toString());
            assertEquals(Json.read("[\"sampling/createMessage\"]"), seen.get(0).path("canAsk"));
        }
    }

    @Test
    void aCallerThatCannotAnswerGetsAToolErrorSayingWhy() {
        List<JsonNode> seen = Collections.synchronizedList(new ArrayList<>());
        try (Registry reg = greeter(seen)) {
            List<ToolResult> out = reg.execute(List.of(Call.of("a", "greet", Map.of()),
                    Call.of("b", "greetLater", Map.of())));
            for (ToolResult r : out) {
                assertEquals(Outcome.TOOL_ERROR, r.outcome(), r.toString());
                assertTrue(r.content().startsWith(
                        "the tool asked for input (name (elicitation/create)), which its caller cannot give: "),
                        r.content());
                assertTrue(r.content().contains("cannot be asked"), r.content());
            }
            assertEquals(List.of(Json.read("{\"canAsk\":[]}"), Json.read("{\"canAsk\":[]}")), List.copyOf(seen));
        }
    }

    @Test
    void requestsCapstanRefusesEndTheCallWithItsReason() {
        try (Registry reg = new Registry().tool("bad", "Asks for something MCP has no method for.",
                "{\"type\":\"object\"}", call -> {
                    throw new InputRequiredException(Map.of("k", Map.of("method", "ping")));
                })) {
            ToolResult r = reg.execute(List.of(Call.of("1", "bad", Map.of()))).get(0);
            assertEquals(Outcome.TOOL_ERROR, r.outcome());
            assertTrue(r.content().contains("must be one of elicitation/create"), r.content());
        }
        assertFalse(CapstanException.class.isAssignableFrom(InputRequiredException.class));
    }
}
