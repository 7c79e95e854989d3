package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A tool call in capstan's normalized form {@code {"id","name","arguments"}}, as
 * {@link Formats#parseCalls} reads it from a provider's response and {@link Registry#execute(List)} takes it.
 *
 * @param id the call's id (the provider's, to pair the result with the call)
 * @param name the tool's name
 * @param arguments an object, or a string holding one (as OpenAI sends them; also how capstan keeps arguments it
 *     could not read)
 */
public record Call(String id, String name, JsonNode arguments) {

    /** A call whose arguments are any value Jackson writes as a JSON object (a Map, a record, a JsonNode...). */
    public static Call of(String id, String name, Object arguments) {
        JsonNode args = arguments instanceof JsonNode n ? n
                : arguments instanceof String s ? Json.MAPPER.getNodeFactory().textNode(s)
                : Json.MAPPER.valueToTree(arguments == null ? Map.of() : arguments);
        return new Call(id, name, args);
    }

    /** The calls as the UTF-8 JSON array capstan takes, written in one pass (what Jackson wrote for them). */
    static byte[] write(List<Call> calls) {
        JsonOut out = new JsonOut().ascii('[');
        for (int i = 0; i < calls.size(); i++) {
            if (i > 0) out.ascii(',');
            Call c = calls.get(i);
            if (c == null) {
                out.ascii("null"); // capstan says which entry is not a call
                continue;
            }
            out.ascii("{\"id\":");
            if (c.id() == null) out.ascii("null");
            else out.quoted(c.id());
            out.ascii(",\"name\":");
            if (c.name() == null) out.ascii("null");
            else out.quoted(c.name());
            out.ascii(",\"arguments\":").node(c.arguments()).ascii('}');
        }
        return out.ascii(']').bytes();
    }

    static List<Call> listOf(String json) {
        JsonNode arr = Json.read(json);
        List<Call> out = new ArrayList<>(arr.size());
        for (JsonNode n : arr) {
            out.add(new Call(n.path("id").asText(), n.path("name").asText(), n.get("arguments")));
        }
        return out;
    }
}
