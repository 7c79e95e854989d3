package dev.capstan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

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

    static String write(Object o) {
        try {
            return MAPPER.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot write as JSON: " + e.getOriginalMessage(), e);
        }
    }
}
