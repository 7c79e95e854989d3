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
 * @param content the text for the model
 * @param isError {@code outcome != OK}
 * @param outcome how the call ended
 * @param durationUs how long the tool ran, in microseconds
 */
public record ToolResult(int index, String id, String name, String content, boolean isError, Outcome outcome,
        long durationUs) {

    static List<ToolResult> listOf(String json) {
        JsonNode arr = Json.read(json);
        List<ToolResult> out = new ArrayList<>(arr.size());
        int i = 0;
        for (JsonNode n : arr) {
            out.add(new ToolResult(i++, n.path("id").asText(), n.path("name").asText(), n.path("content").asText(),
                    n.path("is_error").asBoolean(), Outcome.ofWire(n.path("outcome").asText(null)),
                    n.path("duration_us").asLong()));
        }
        return out;
    }
}
