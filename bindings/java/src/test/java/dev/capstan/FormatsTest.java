package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FormatsTest {
    static String fixture(String name) {
        try (InputStream in = FormatsTest.class.getResourceAsStream("/fixtures/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    @Test
    void parseCallsReadsEachFormatsParallelCalls() {
        List<Call> chat = Formats.parseCalls(Format.OPENAI_CHAT, fixture("openai_chat_parallel.json"));
        assertEquals(List.of("call_Wx1", "call_Wx2"), chat.stream().map(Call::id).toList());
        assertEquals(List.of("book_trip", "get_time"), chat.stream().map(Call::name).toList());

        List<Call> responses = Formats.parseCalls(Format.OPENAI_RESPONSES, fixture("openai_responses_parallel.json"));
        assertEquals("call_Par1s", responses.get(0).id());
        assertEquals("get_weather", responses.get(0).name());

        List<Call> anthropic = Formats.parseCalls(Format.ANTHROPIC, fixture("anthropic_parallel.json"));
        assertEquals(List.of("toolu_01A", "toolu_01B"), anthropic.stream().map(Call::id).toList());
        assertEquals("São Paulo, BR", anthropic.get(0).arguments().path("location").asText());

        List<Call> gemini = Formats.parseCalls(Format.GEMINI, fixture("gemini_parallel.json"));
        assertEquals(List.of("set_light", "get_time"), gemini.stream().map(Call::name).toList());
        assertEquals("kök", gemini.get(0).arguments().path("room").asText());

        String mcp = Json.read(fixture("mcp_tools_call_batch.json")).get("requests").toString();
        List<Call> calls = Formats.parseCalls(Format.MCP, mcp);
        assertEquals(List.of("get_weather", "get_current_time"), calls.stream().map(Call::name).toList());
    }

    @Test
    void formatResultsWritesWhatTheProviderTakesNext() {
        List<ToolResult> results = List.of(new ToolResult(0, "toolu_01A", "get_weather", "sunny", false, Outcome.OK, 5),
                new ToolResult(1, "toolu_01B", "get_time", "no clock", true, Outcome.TOOL_ERROR, 5));
        JsonNode msg = Json.read(Formats.formatResults(Format.ANTHROPIC, results));
        JsonNode blocks = msg.isArray() ? msg.get(0).path("content") : msg.path("content");
        assertEquals("tool_result", blocks.get(0).path("type").asText());
        assertEquals("toolu_01A", blocks.get(0).path("tool_use_id").asText());
        assertTrue(blocks.get(1).path("is_error").asBoolean(), blocks.toString());

        JsonNode chat = Json.read(Formats.formatResults(Format.OPENAI_CHAT, results));
        assertEquals("tool", chat.get(0).path("role").asText());
        assertEquals("toolu_01B", chat.get(1).path("tool_call_id").asText());
    }

    @Test
    void providerErrorCarriesItsStructuredFields() {
        String body = """
                {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded", "details": [
                  {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37.5s"}]}}""";
        CapstanException e = assertThrows(CapstanException.class, () -> Formats.parseCalls(Format.GEMINI, body));
        assertEquals("CAPSTAN_ERR_PROVIDER_ERROR", e.status());
        assertEquals(18, e.statusCode());
        CapstanException.Provider p = e.provider();
        assertEquals("RESOURCE_EXHAUSTED", p.type());
        assertEquals("429", p.code());
        assertEquals(429, p.httpStatus());
        assertEquals(37_500L, p.retryAfterMs());
        assertEquals("Quota exceeded", p.message());
        assertTrue(e.getMessage().startsWith("provider error ("), e.getMessage());

        CapstanException a = assertThrows(CapstanException.class, () -> Formats.parseCalls(Format.ANTHROPIC,
                "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"));
        assertEquals("overloaded_error", a.provider().kind());
        assertNull(a.provider().httpStatus());
        assertNull(a.pointer());
    }

    @Test
    void aBodyOfNoKnownShapeIsInvalidResponseNamingWhere() {
        CapstanException e = assertThrows(CapstanException.class,
                () -> Formats.parseCalls(Format.ANTHROPIC, "{\"content\":[{\"type\":\"tool_use\",\"id\":\"x\"}]}"));
        assertEquals("CAPSTAN_ERR_INVALID_RESPONSE", e.status());
        assertTrue(e.getMessage().contains("name"), e.getMessage());
        assertNull(e.provider());
    }

    /** An example agent turn (as in docs/java.md): an OpenAI Chat Completions response with two parallel calls. */
    record Leg(String from, String to) {}

    record Traveler(String name, List<String> tags) {}

    record Trip(Traveler traveler, List<Leg> legs, java.util.Optional<String> note) {}

    @Test
    void agentTurnRunsTheCallsOfAProviderResponseAndWritesTheToolMessages() {
        try (Registry r = new Registry()) {
            r.recordTool("book_trip", "Books a trip.", Trip.class,
                    trip -> Map.of("booked", trip.legs().size(), "for", trip.traveler().name(),
                            "note", trip.note().orElse("")));
            r.tool("get_time", "The current UTC time.", null, call -> "2026-12-01T20:00:00Z");

            String messages = r.runTurn(Format.OPENAI_CHAT, fixture("openai_chat_parallel.json"));

            JsonNode m = Json.read(messages);
            assertEquals(2, m.size());
            assertEquals("tool", m.get(0).path("role").asText());
            assertEquals("call_Wx1", m.get(0).path("tool_call_id").asText());
            assertEquals(Map.of("booked", 1, "for", "Zoë Ørsted", "note", "🚆 then ✈️"),
                    Json.MAPPER.convertValue(Json.read(m.get(0).path("content").asText()), Map.class));
            assertEquals("call_Wx2", m.get(1).path("tool_call_id").asText());
            assertEquals("2026-12-01T20:00:00Z", m.get(1).path("content").asText());
        }
    }

    @Test
    void runTurnOnAProviderErrorRunsNothing() {
        try (Registry r = new Registry()) {
            int[] ran = {0};
            r.tool("get_time", "", null, call -> ran[0]++);
            CapstanException e = assertThrows(CapstanException.class, () -> r.runTurn(Format.OPENAI_CHAT,
                    "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}"));
            assertEquals("rate_limit_exceeded", e.provider().code());
            assertEquals(0, ran[0]);
        }
    }
}
