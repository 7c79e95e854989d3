package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Content parts, history check and repair, tool search. */
class ContentTest {
    static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static final String ANTHROPIC_CALL = """
            {"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
             "content":[{"type":"tool_use","id":"toolu_1","name":"chart","input":{}}],
             "stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}""";

    static Registry charts() {
        return new Registry().tool("chart", "Draws a chart.", null,
                call -> List.of("the chart:", Content.image(PNG, "image/png")));
    }

    @Test
    void aToolReturningTextAndAnImageGivesPartsAndTheirText() {
        try (Registry r = charts()) {
            ToolResult res = r.execute(List.of(Call.of("1", "chart", Map.of()))).get(0);
            assertEquals(Outcome.OK, res.outcome(), res.content());
            assertEquals("the chart:\n[image: image/png, 8 bytes]", res.content());
            assertTrue(res.hasParts());
            JsonNode parts = Json.read(res.partsJson());
            assertEquals("text", parts.get(0).path("type").asText());
            assertEquals("image", parts.get(1).path("type").asText());
            assertEquals(Base64.getEncoder().encodeToString(PNG), parts.get(1).path("data").asText());
        }
    }

    @Test
    void runTurnSendsTheImageToTheProviderAndFormatResultsKeepsIt() {
        try (Registry r = charts()) {
            JsonNode turn = Json.read(r.runTurn(Format.ANTHROPIC, ANTHROPIC_CALL));
            JsonNode block = turn.path("content").get(0);
            assertEquals("tool_result", block.path("type").asText());
            JsonNode image = block.path("content").get(1);
            assertEquals("image", image.path("type").asText(), block.toString());
            assertEquals("image/png", image.path("source").path("media_type").asText());
            assertEquals(Base64.getEncoder().encodeToString(PNG), image.path("source").path("data").asText());
            // the same results, executed, then formatted: the parts survive the round trip
            List<ToolResult> results = r.execute(Formats.parseCalls(Format.ANTHROPIC, ANTHROPIC_CALL));
            assertEquals(turn, Json.read(Formats.formatResults(Format.ANTHROPIC, results)));
        }
    }

    @Test
    void aSubmittedBatchResultCarriesTheToolsImagePart() throws Exception {
        try (Registry r = charts()) {
            List<ToolResult> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<ToolResult> results;
            try (Batch b = r.submit(List.of(Call.of("s1", "chart", Map.of()), Call.of("s2", "chart", Map.of())),
                    ExecOptions.DEFAULTS, seen::add)) {
                results = b.results().get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
            assertEquals(2, seen.size());
            for (ToolResult res : results) {
                assertEquals(Outcome.OK, res.outcome(), res.content());
                JsonNode image = Json.read(res.partsJson()).get(1);
                assertEquals("image", image.path("type").asText(), res.partsJson());
                assertEquals("image/png", image.path("mimeType").asText());
                assertEquals(Base64.getEncoder().encodeToString(PNG), image.path("data").asText());
            }
            for (ToolResult res : seen) assertTrue(res.hasParts(), res.toString());
        }
    }

    @Test
    void runWholeTurnStartsWithTheAssistantMessageHoldingTheThinkingBlock() {
        String thinking = "{\"type\":\"thinking\",\"thinking\":\"Draw it.\",\"signature\":\"EqQBCkYIBRgCKkD/sig==\"}";
        String response = ANTHROPIC_CALL.replace("\"content\":[", "\"content\":[" + thinking + ",");
        try (Registry r = charts()) {
            JsonNode turn = Json.read(r.runWholeTurn(Format.ANTHROPIC, response));
            assertEquals(2, turn.size(), turn.toString());
            assertEquals("assistant", turn.get(0).path("role").asText());
            assertEquals(Json.read(thinking), turn.get(0).path("content").get(0));
            assertEquals("user", turn.get(1).path("role").asText());
            assertEquals("toolu_1", turn.get(1).path("content").get(0).path("tool_use_id").asText());
        }
    }

    @Test
    void aPartThatFailsItsCheckIsAToolErrorNamingIt() {
        try (Registry r = new Registry()) {
            r.tool("bad", "", null, call -> Content.image(PNG, "text/plain"));
            r.tool("audio", "", null, call -> Content.file(new byte[] {1, 2}, "audio/wav", "a.wav"));
            List<ToolResult> out = r.execute(List.of(Call.of("1", "bad", Map.of()), Call.of("2", "audio", Map.of())));
            assertEquals(Outcome.TOOL_ERROR, out.get(0).outcome());
            assertTrue(out.get(0).content().contains("image/"), out.get(0).content());
            assertNull(out.get(0).partsJson());
            assertEquals(Outcome.OK, out.get(1).outcome(), out.get(1).content());
            assertEquals("audio", Json.read(out.get(1).partsJson()).get(0).path("type").asText());
        }
    }

    @Test
    void plainResultsCarryNoParts() {
        try (Registry r = RegistryTest.adder()) {
            ToolResult res = r.execute(List.of(Call.of("1", "add", Map.of("a", 1)))).get(0);
            assertFalse(res.hasParts());
        }
    }

    static final String CHAT_HISTORY = """
            [{"role":"user","content":"add 1 and 2"},
             {"role":"assistant","content":null,"tool_calls":[
               {"id":"c1","type":"function","function":{"name":"add","arguments":"{\\"a\\":1}"}}]},
             {"role":"user","content":"well?"}]""";

    @Test
    void checkHistoryFindsACallWithoutAResultAndRepairsIt() {
        HistoryCheck check = Formats.checkHistory(Format.OPENAI_CHAT, CHAT_HISTORY, false);
        assertFalse(check.ok());
        assertEquals("missing_result", check.findings().get(0).path("kind").asText());
        assertEquals("c1", check.findings().get(0).path("call_id").asText());
        assertNull(check.repairedJson());

        HistoryCheck fixed = Formats.checkHistory(Format.OPENAI_CHAT, CHAT_HISTORY, true);
        JsonNode repaired = Json.read(fixed.repairedJson());
        assertEquals(4, repaired.size());
        assertEquals("tool", repaired.get(2).path("role").asText());
        assertEquals("c1", repaired.get(2).path("tool_call_id").asText());
        assertTrue(Formats.checkHistory(Format.OPENAI_CHAT, fixed.repairedJson(), false).ok());
    }

    @Test
    void checkHistoryRefusesFormatsWithoutConversations() {
        CapstanException e = assertThrows(CapstanException.class,
                () -> Formats.checkHistory(Format.DESCRIBE, "[]", false));
        assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", e.status());
    }

    static Registry toolbox() {
        return new Registry()
                .tool("get_weather", "Returns the weather forecast for a city.",
                        "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}", call -> "sunny")
                .tool("send_email", "Sends an email message to a recipient.", null,
                        ToolOptions.DEFAULTS.withDeferred(true), call -> "sent")
                .tool("read_file", "Reads a file from disk.", null, call -> "text");
    }

    @Test
    void searchRanksByWordsOrByARegex() {
        try (Registry r = toolbox()) {
            List<SearchHit> hits = r.search("weather forecast");
            assertEquals("get_weather", hits.get(0).name());
            assertTrue(hits.get(0).score() > 0);
            assertEquals(List.of("send_email"), r.search("(?i)^send", 5, true).stream().map(SearchHit::name).toList());
            CapstanException e = assertThrows(CapstanException.class, () -> r.search("(", 5, true));
            assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", e.status());
        }
    }

    static List<String> exported(Registry r) {
        return Json.read(r.toolsJson(Format.OPENAI_CHAT)).findValuesAsText("name");
    }

    @Test
    void aDeferredToolIsExportedOnceTheSearchToolFoundIt() {
        try (Registry r = toolbox().addSearchTool()) {
            assertFalse(exported(r).contains("send_email"), exported(r).toString());
            assertTrue(exported(r).contains("tool_search"));
            assertTrue(r.toolsJson(Format.DESCRIBE).contains("send_email")); // describe lists every tool
            assertEquals("sent", r.execute(List.of(Call.of("0", "send_email", Map.of()))).get(0).content());

            ToolResult found = r.execute(List.of(Call.of("1", "tool_search", Map.of("query", "email")))).get(0);
            assertEquals(Outcome.OK, found.outcome(), found.content());
            assertEquals("send_email", Json.read(found.content()).path("tools").get(0).path("name").asText());
            assertTrue(exported(r).contains("send_email"), exported(r).toString());

            r.unloadTools();
            assertFalse(exported(r).contains("send_email"));
        }
    }

    @Test
    void theSearchToolTakesAName() {
        try (Registry r = toolbox().addSearchTool(SearchToolOptions.DEFAULTS.withName("find_tools").withLimit(1))) {
            assertTrue(exported(r).contains("find_tools"));
            JsonNode tools = Json.read(r.execute(List.of(Call.of("1", "find_tools", Map.of("query", "file disk"))))
                    .get(0).content()).path("tools");
            assertEquals(1, tools.size());
            assertEquals("read_file", tools.get(0).path("name").asText());
            CapstanException e = assertThrows(CapstanException.class,
                    () -> r.addSearchTool(SearchToolOptions.DEFAULTS.withLimit(101)));
            assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", e.status());
        }
    }
}
