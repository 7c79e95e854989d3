package dev.capstan;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One call's result.
 *
 * @param index position of the call in its batch
 * @param id the call's id
 * @param name the tool's name
 * @param content the text for the model (for content parts: their text, each image or file a bracketed line)
 * @param isError {@code outcome != OK}
 * @param outcome how the call ended
 * @param durationUs how long the tool ran, in microseconds
 * @param partsJson the content parts (MCP content blocks, a JSON array) the tool returned, as capstan
 *     checked and capped them (capstan_result.parts_json); null when it returned text or JSON
 * @param structuredContentJson the structured content object the tool returned with its parts, or null
 */
public record ToolResult(int index, String id, String name, String content, boolean isError, Outcome outcome,
        long durationUs, String partsJson, String structuredContentJson) {

    /** A result without content parts. */
    public ToolResult(int index, String id, String name, String content, boolean isError, Outcome outcome,
            long durationUs) {
        this(index, id, name, content, isError, outcome, durationUs, null, null);
    }

    /** Whether the tool returned content parts (images, files, audio). */
    public boolean hasParts() {
        return partsJson != null || structuredContentJson != null;
    }

    static List<ToolResult> listOf(String json) {
        try {
            byte[] b = json.getBytes(StandardCharsets.UTF_8);
            return read(b, b.length);
        } catch (IOException e) {
            throw new IllegalStateException("capstan returned text that is not JSON: " + e.getMessage(), e);
        }
    }

    /**
     * The results array ({@code capstan_registry_execute}'s, the first {@code len} bytes of {@code b}) read in
     * one streaming pass; the content parts and structured content kept as the text capstan wrote.
     */
    static List<ToolResult> read(byte[] b, int len) throws IOException {
        try (JsonParser p = Json.parser(b, len)) {
            List<ToolResult> out = new ArrayList<>();
            JsonToken first = p.nextToken();
            if (first == null) return out; // no text (a stream's outcome without results)
            if (first != JsonToken.START_ARRAY) throw new IOException("the results are not an array");
            while (p.nextToken() == JsonToken.START_OBJECT) out.add(one(p, b, out.size()));
            return out;
        }
    }

    private static ToolResult one(JsonParser p, byte[] b, int index) throws IOException {
        String id = "";
        String name = "";
        String content = "";
        boolean isError = false;
        String outcome = null;
        long durationUs = 0;
        String parts = null;
        String structured = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            switch (field) {
                case "id" -> id = text(p, t);
                case "name" -> name = text(p, t);
                case "content" -> content = text(p, t);
                case "is_error" -> isError = t == JsonToken.VALUE_TRUE;
                case "outcome" -> outcome = t == JsonToken.VALUE_STRING ? p.getText() : null;
                case "duration_us" -> durationUs = t.isNumeric() ? p.getValueAsLong() : 0;
                case "parts" -> parts = t == JsonToken.VALUE_NULL ? null : Json.raw(p, b);
                case "structured_content" -> structured = t == JsonToken.VALUE_NULL ? null : Json.raw(p, b);
                default -> p.skipChildren();
            }
        }
        return new ToolResult(index, id, name, content, isError, Outcome.ofWire(outcome), durationUs, parts,
                structured);
    }

    /** A scalar's text ({@code null} for null), "" for an object or array: what JsonNode.asText gave. */
    private static String text(JsonParser p, JsonToken t) throws IOException {
        if (t.isScalarValue()) return p.getText();
        p.skipChildren();
        return "";
    }
}
