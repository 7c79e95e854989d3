package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * This binding against tests/fixtures/binding_behaviour.json, the table every binding's suite checks (issue
 * #49.6), and duplicate registration (#49.5).
 */
class BehaviourTest {
    static JsonNode table() throws Exception {
        return Json.read(Files.readString(Path.of("../../tests/fixtures/binding_behaviour.json")));
    }

    static Registry withOld() {
        return new Registry().tool("f", "", null, call -> "old");
    }

    static JsonNode mistake(JsonNode table, String name) {
        for (JsonNode row : table.get("errors")) if (row.get("mistake").asText().equals(name)) return row;
        throw new AssertionError("no row " + name);
    }

    @Test
    void formatsHaveTheTablesCodes() throws Exception {
        int canonical = 0;
        for (JsonNode row : table().get("formats")) {
            if (!row.path("canonical").asBoolean()) continue; // Java takes formats as Format, not by name
            canonical++;
            Format f = Format.valueOf(row.get("name").asText().toUpperCase(Locale.ROOT));
            assertEquals(row.get("code").asInt(), f.code, f.name());
        }
        assertEquals(Format.values().length, canonical);
    }

    @Test
    void callsWithoutAnIdGetTheTablesId() throws Exception {
        try (Registry r = withOld()) {
            for (JsonNode row : table().get("ids")) {
                int index = row.get("index").asInt();
                String calls = "[" + "{\"name\":\"f\"},".repeat(index) + "{\"name\":\"f\"}]";
                assertEquals(row.get("id").asText(), r.execute(calls).get(index).id());
            }
        }
    }

    @Test
    void aSecondRegistrationIsRefusedNamingTheToolAndWithReplaceTheNewHandlerRuns() throws Exception {
        JsonNode row = mistake(table(), "duplicate_registration");
        try (Registry r = withOld()) {
            CapstanException e = assertThrows(CapstanException.class, () -> r.tool("f", "", null, call -> "new"));
            assertEquals(row.get("status").asText(), e.status());
            assertTrue(e.getMessage().contains(row.get("fragment").asText()) && e.getMessage().contains("\"f\""),
                    e.getMessage());
            assertEquals("old", r.execute("{\"name\":\"f\"}").get(0).content());
            r.tool("f", "", null, ToolOptions.DEFAULTS.withReplace(), call -> "new");
            assertEquals("new", r.execute("{\"name\":\"f\"}").get(0).content());
        }
    }

    public static class Replacing {
        @Tool(name = "f", replace = true)
        public static String f() {
            return "annotated";
        }
    }

    @Test
    void theAnnotationsReplaceAttributeReplaces() {
        try (Registry r = withOld()) {
            r.register(Replacing.class);
            assertEquals("annotated", r.execute("{\"name\":\"f\"}").get(0).content());
        }
    }

    @Test
    void callMistakesEndWithTheTablesOutcome() throws Exception {
        JsonNode table = table();
        try (Registry r = withOld()) {
            for (String name : new String[] {"unknown_tool", "arguments_not_json", "arguments_not_object"}) {
                JsonNode row = mistake(table, name);
                String call = name.equals("unknown_tool") ? "{\"id\":\"a\",\"name\":\"nope\"}"
                        : "{\"id\":\"a\",\"name\":\"f\",\"arguments\":" + row.get("arguments") + "}";
                ToolResult result = r.execute(call).get(0);
                assertEquals(row.get("outcome").asText(), result.outcome().wireName(), name);
                assertTrue(result.content().contains(row.get("fragment").asText()), result.content());
                if (row.path("names_tool").asBoolean()) assertTrue(result.content().contains("nope"));
            }
        }
    }

    @Test
    void aProviderShapedCallPointsAtRunTurn() throws Exception {
        JsonNode row = mistake(table(), "provider_shaped_call");
        try (Registry r = withOld()) {
            CapstanException e = assertThrows(CapstanException.class, () -> r.execute("[" + row.get("call") + "]"));
            assertEquals(row.get("status").asText(), e.status());
            assertTrue(e.getMessage().contains(row.get("fragment").asText()), e.getMessage());
        }
    }
    // unknown_format: Java's Format is an enum, so no unknown format reaches capstan.
}
