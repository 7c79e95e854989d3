package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class SchemasTest {
    enum Unit { CELSIUS, FAHRENHEIT }

    record Weather(@Param("City and country") String location, Unit unit, Optional<Integer> days, List<Double> hours,
            Set<String> tags, Map<String, Boolean> flags) {}

    record Loop(String name, List<Loop> children) {}

    @Test
    void recordSchemaHasEveryComponentRequiredButOptionals() {
        JsonNode s = Json.read(Schemas.of(Weather.class));
        assertEquals("object", s.path("type").asText());
        assertEquals(false, s.path("additionalProperties").asBoolean(true));
        JsonNode p = s.path("properties");
        assertEquals("string", p.path("location").path("type").asText());
        assertEquals("City and country", p.path("location").path("description").asText());
        assertEquals("[\"CELSIUS\",\"FAHRENHEIT\"]", p.path("unit").path("enum").toString());
        assertEquals("integer", p.path("days").path("type").asText());
        assertEquals("number", p.path("hours").path("items").path("type").asText());
        assertTrue(p.path("tags").path("uniqueItems").asBoolean());
        assertEquals("boolean", p.path("flags").path("additionalProperties").path("type").asText());
        assertEquals("[\"location\",\"unit\",\"hours\",\"tags\",\"flags\"]", s.path("required").toString());
    }

    @Test
    void recursiveRecordsAndUnsupportedTypesAreRefusedNamingTheType() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Schemas.of(Loop.class));
        assertTrue(e.getMessage().contains("Loop"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Schemas.forType(Thread.class));
        assertTrue(e.getMessage().contains("java.lang.Thread"), e.getMessage());
    }

    @Test
    void recordToolValidatesAgainstTheGeneratedSchemaAndBindsTheRecord() {
        try (Registry r = new Registry()) {
            r.recordTool("weather", "Forecast.", Weather.class,
                    w -> w.location() + "/" + w.unit() + "/" + w.days().orElse(-1) + "/" + w.hours().size());
            List<ToolResult> out = r.execute(List.of(
                    Call.of("1", "weather", Map.of("location", "Oslo", "unit", "CELSIUS", "hours", List.of(1.5),
                            "tags", List.of(), "flags", Map.of())),
                    Call.of("2", "weather", Map.of("location", "Oslo", "unit", "KELVIN", "hours", List.of(),
                            "tags", List.of(), "flags", Map.of()))));
            assertEquals("Oslo/CELSIUS/-1/1", out.get(0).content());
            assertEquals(Outcome.INVALID_ARGUMENTS, out.get(1).outcome());
        }
    }

    public static class Tools {
        @Tool(description = "Adds two numbers.")
        public long add(@Param("first") long a, long b) {
            return a + b;
        }

        @Tool(name = "greet", description = "Greets.")
        public String hello(String name, Optional<String> greeting) {
            return greeting.orElse("Hello") + ", " + name;
        }

        @Tool(description = "Later.")
        public CompletableFuture<String> later(String what) {
            return CompletableFuture.supplyAsync(() -> "later " + what);
        }

        @Tool(description = "Fails.")
        public String fail() throws java.io.IOException {
            throw new java.io.IOException("no such file");
        }

        public String notATool() {
            return "";
        }
    }

    @Test
    void annotatedMethodsBecomeToolsWithSchemasFromTheirParameters() {
        try (Registry r = new Registry().register(new Tools())) {
            JsonNode tools = Json.read(r.toolsJson(Format.DESCRIBE));
            assertEquals(List.of("add", "fail", "greet", "later"),
                    java.util.stream.StreamSupport.stream(tools.spliterator(), false).map(t -> t.path("name").asText())
                            .toList());
            JsonNode add = tools.get(0).path("parameters");
            assertEquals("integer", add.path("properties").path("a").path("type").asText());
            assertEquals("first", add.path("properties").path("a").path("description").asText());
            assertEquals("[\"a\",\"b\"]", add.path("required").toString());

            List<ToolResult> out = r.execute(List.of(Call.of("1", "add", Map.of("a", 2, "b", 3)),
                    Call.of("2", "greet", Map.of("name", "Ada")),
                    Call.of("3", "greet", Map.of("name", "Ada", "greeting", "Hi")),
                    Call.of("4", "later", Map.of("what", "x")), Call.of("5", "fail", Map.of())));
            assertEquals("5", out.get(0).content());
            assertEquals("Hello, Ada", out.get(1).content());
            assertEquals("Hi, Ada", out.get(2).content());
            assertEquals("later x", out.get(3).content());
            assertEquals(Outcome.TOOL_ERROR, out.get(4).outcome());
            assertTrue(out.get(4).content().contains("no such file"), out.get(4).content());
        }
    }

    @Test
    void registeringAClassWithoutToolsIsRefused() {
        try (Registry r = new Registry()) {
            assertThrows(IllegalArgumentException.class, () -> r.register(new Object()));
        }
    }
}
