package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Progress ({@code capstan_call_progress}) and MCP metadata on a tool ({@code capstan_tool_def.mcp_meta}). */
class ProgressTest {
    @Test
    void progressReachesTheEventHookAndBadReportsAreRefused() {
        ConcurrentLinkedQueue<ToolEvent> events = new ConcurrentLinkedQueue<>();
        List<String> refused = new ArrayList<>();
        AtomicReference<ToolCall> kept = new AtomicReference<>();
        try (Registry r = new Registry()) {
            r.tool("work", "", null, call -> {
                kept.set(call);
                assertTrue(call.progress(1, 4, "one"));
                for (Runnable bad : List.<Runnable>of(() -> call.progress(1, 4, "same"),
                        () -> call.progress(Double.NaN), () -> call.progress(5, -1, null))) {
                    try {
                        bad.run();
                        refused.add("accepted");
                    } catch (CapstanException e) {
                        refused.add(e.status());
                    }
                }
                assertTrue(call.progress(2.5));
                return "done";
            });
            r.setEventHook(events::add);
            assertEquals("done", r.execute(List.of(Call.of("p1", "work", Map.of()))).get(0).content());
            assertEquals(List.of("CAPSTAN_ERR_INVALID_ARGUMENT", "CAPSTAN_ERR_INVALID_ARGUMENT",
                    "CAPSTAN_ERR_INVALID_ARGUMENT"), refused);
            List<ToolEvent> progress = events.stream().filter(e -> e.kind() == ToolEvent.Kind.PROGRESS).toList();
            assertEquals(2, progress.size(), events.toString());
            assertEquals("p1", progress.get(0).id());
            assertEquals("work", progress.get(0).tool());
            assertEquals(1.0, progress.get(0).progress());
            assertEquals(4.0, progress.get(0).total());
            assertEquals("one", progress.get(0).message());
            assertEquals(2.5, progress.get(1).progress());
            assertEquals(0.0, progress.get(1).total());
            assertNull(progress.get(1).message());
            // the call has its result: a late report is refused without a throw
            assertFalse(kept.get().progress(3, 4, "late"));
        }
    }

    static final String META = """
            {"title":"Addition",
             "annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
             "outputSchema":{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]},
             "icons":[{"src":"https://example.com/add.png","mimeType":"image/png","sizes":["48x48"]}]}""";

    static Registry summer() {
        Registry r = new Registry();
        r.tool("sum", "Adds.", null, ToolOptions.DEFAULTS.withMcpMeta(META),
                call -> call.arguments().path("lie").asBoolean() ? Map.of("sum", "3") : Map.of("sum", 3));
        return r;
    }

    @Test
    void mcpMetadataIsInTheExportsAndAFailingOutputSchemaIsAToolError() {
        JsonNode meta = Json.read(META);
        try (Registry r = summer()) {
            JsonNode mcp = Json.read(r.toolsJson(Format.MCP)).get(0);
            for (String f : List.of("title", "annotations", "outputSchema", "icons")) {
                assertEquals(meta.get(f), mcp.get(f), f + " in " + mcp);
            }
            assertEquals("Addition", Json.read(r.toolsJson(Format.DESCRIBE)).get(0).path("mcp").path("title").asText());
            List<ToolResult> out = r.execute(List.of(Call.of("a", "sum", Map.of()),
                    Call.of("b", "sum", Map.of("lie", true))));
            assertEquals(Outcome.OK, out.get(0).outcome());
            assertEquals(Outcome.TOOL_ERROR, out.get(1).outcome());
            assertTrue(out.get(1).content().contains("does not match its outputSchema"), out.get(1).content());
            assertTrue(out.get(1).content().contains("/sum"), out.get(1).content());
            CapstanException e = assertThrows(CapstanException.class, () -> r.tool("x", "", null,
                    ToolOptions.DEFAULTS.withMcpMeta(Map.of("annotations", Map.of("readOnlyHint", "yes"))), c -> ""));
            assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", e.status());
            assertTrue(e.getMessage().contains("readOnlyHint"), e.getMessage());
        }
    }

    @Test
    void aServedToolsListCarriesTheMetadata() throws Exception {
        JsonNode meta = Json.read(META);
        try (Registry r = summer(); McpServer srv = r.serveMcp(McpServer.Options.DEFAULTS);
                HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            HttpResponse<String> init = post(http, srv.url(), null, """
                    {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",
                     "capabilities":{},"clientInfo":{"name":"java-test","version":"0"}}}""");
            assertEquals(200, init.statusCode(), init.body());
            String session = init.headers().firstValue("mcp-session-id").orElse(null);
            post(http, srv.url(), session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            HttpResponse<String> list = post(http, srv.url(), session,
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}");
            assertEquals(200, list.statusCode(), list.body());
            JsonNode tool = body(list).path("result").path("tools").get(0);
            assertEquals("sum", tool.path("name").asText(), tool.toString());
            for (String f : List.of("title", "annotations", "outputSchema", "icons")) {
                assertEquals(meta.get(f), tool.get(f), f + " in " + tool);
            }
        }
    }

    static HttpResponse<String> post(HttpClient http, String url, String session, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (session != null) b.header("mcp-session-id", session).header("mcp-protocol-version", "2025-06-18");
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The JSON-RPC answer: the body, or the first non-empty SSE data line. */
    static JsonNode body(HttpResponse<String> res) {
        if (!res.headers().firstValue("content-type").orElse("").startsWith("text/event-stream")) {
            return Json.read(res.body());
        }
        for (String line : res.body().split("\n")) {
            if (line.startsWith("data:") && !line.substring(5).isBlank()) return Json.read(line.substring(5));
        }
        throw new AssertionError("no data in " + res.body());
    }
}
