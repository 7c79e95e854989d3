package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
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
        JsonNode arr = Json.read(json);
        List<ToolResult> out = new ArrayList<>(arr.size());
        int i = 0;
        for (JsonNode n : arr) {
            JsonNode parts = n.get("parts");
            JsonNode structured = n.get("structured_content");
            out.add(new ToolResult(i++, n.path("id").asText(), n.path("name").asText(), n.path("content").asText(),
                    n.path("is_error").asBoolean(), Outcome.ofWire(n.path("outcome").asText(null)),
                    n.path("duration_us").asLong(), parts == null || parts.isNull() ? null : parts.toString(),
                    structured == null || structured.isNull() ? null : structured.toString()));
        }
        return out;
    }
}
