package dev.capstan;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** The binding's one Jackson mapper (thread-safe once configured). */
final class Json {
    private Json() {}

    static final ObjectMapper MAPPER = new ObjectMapper().findAndRegisterModules();

    /** A reader of trees, made once: MAPPER.readTree would resolve the JsonNode type again on every call. */
    private static final com.fasterxml.jackson.databind.ObjectReader TREES = MAPPER.reader();

    static JsonNode read(String s) {
        try {
            return TREES.readTree(s);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("capstan returned text that is not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** A streaming parser over the first {@code len} bytes of {@code b} (UTF-8). */
    static JsonParser parser(byte[] b, int len) throws IOException {
        return MAPPER.getFactory().createParser(b, 0, len);
    }

    static JsonParser parser(String s) throws IOException {
        return MAPPER.getFactory().createParser(s);
    }

    /**
     * The text of the value at {@code p}'s current token, as it stands in {@code b} (the bytes {@code p} reads,
     * from their start); {@code p} is left on the value's last token.
     */
    static String raw(JsonParser p, byte[] b) throws IOException {
        int from = (int) p.currentTokenLocation().getByteOffset();
        p.skipChildren();
        p.finishToken(); // a string's end is found only when it is read
        int to = (int) p.currentLocation().getByteOffset();
        return new String(b, from, to - from, StandardCharsets.UTF_8);
    }

    static String write(Object o) {
        try {
            return MAPPER.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot write as JSON: " + e.getOriginalMessage(), e);
        }
    }
}
