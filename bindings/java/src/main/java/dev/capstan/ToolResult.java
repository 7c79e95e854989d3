package dev.capstan;

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
     * one pass; the content parts and structured content kept as the text capstan wrote.
     */
    static List<ToolResult> read(byte[] b, int len) throws IOException {
        JsonCursor c = new JsonCursor(b, 0, len);
        List<ToolResult> out = new ArrayList<>();
        if (c.peek() == -1) return out; // no text (a stream's outcome without results)
        c.expect('[');
        for (boolean first = true; c.more(']', first); first = false) out.add(one(c, out.size()));
        return out;
    }

    private static final byte[][] FIELDS = JsonCursor.names("id", "name", "content", "is_error", "outcome",
            "duration_us", "parts", "structured_content");

    private static ToolResult one(JsonCursor c, int index) throws IOException {
        String id = "";
        String name = "";
        String content = "";
        boolean isError = false;
        String outcome = null;
        long durationUs = 0;
        String parts = null;
        String structured = null;
        c.expect('{');
        for (boolean first = true; c.more('}', first); first = false) {
            switch (c.key(FIELDS)) {
                case 0 -> id = text(c);
                case 1 -> name = text(c);
                case 2 -> content = text(c);
                case 3 -> isError = c.literal("true") || skip(c);
                case 4 -> outcome = c.peek() == '"' ? c.string() : null;
                case 5 -> durationUs = c.integer() ? c.num : 0;
                case 6 -> parts = c.literal("null") ? null : c.text(c.skip());
                case 7 -> structured = c.literal("null") ? null : c.text(c.skip());
                default -> { }
            }
            if (c.peek() != ',' && c.peek() != '}') c.skip(); // a value not read above
        }
        return new ToolResult(index, id, name, content, isError, Outcome.ofWire(outcome), durationUs, parts,
                structured);
    }

    /** A string's text; another scalar's as written ({@code null} for null), "" for an object or array. */
    private static String text(JsonCursor c) throws IOException {
        int next = c.peek();
        if (next == '"') return c.string();
        int from = c.skip();
        return next == '{' || next == '[' ? "" : c.text(from);
    }

    private static boolean skip(JsonCursor c) throws IOException {
        c.skip();
        return false;
    }
}
