package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * JSON text written straight as UTF-8 into a reusable byte array: a host batch's answers, copied from here to
 * native memory in one piece (no StringBuilder, String or encoding pass in between). The caller writes the
 * structure; {@link #quoted} escapes a string's text.
 */
final class JsonOut {
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    byte[] b = new byte[256];
    int len;

    /** The text written so far. */
    byte[] bytes() {
        return java.util.Arrays.copyOf(b, len);
    }

    private void room(int n) {
        if (len + n > b.length) b = java.util.Arrays.copyOf(b, Math.max(len + n, b.length * 2));
    }

    JsonOut ascii(char c) {
        room(1);
        b[len++] = (byte) c;
        return this;
    }

    /** Text known to be ASCII (field names, punctuation). */
    JsonOut ascii(String s) {
        int n = s.length();
        room(n);
        for (int k = 0; k < n; k++) b[len++] = (byte) s.charAt(k);
        return this;
    }

    JsonOut number(long v) {
        if (v >= 0 && v < 10) return ascii((char) ('0' + v));
        return ascii(Long.toString(v));
    }

    /** Any text as UTF-8, unquoted (JSON another writer made). */
    JsonOut utf8(CharSequence s) {
        return chars(s, false);
    }

    /** {@code s} as a JSON string. */
    JsonOut quoted(CharSequence s) {
        ascii('"');
        return chars(s, true).ascii('"');
    }

    private JsonOut chars(CharSequence s, boolean escape) {
        int n = s.length();
        room(n + 2);
        for (int k = 0; k < n; k++) {
            char c = s.charAt(k);
            if (c < 0x80) {
                if (escape && (c < 0x20 || c == '"' || c == '\\')) {
                    escape(c);
                } else {
                    room(1);
                    b[len++] = (byte) c;
                }
            } else if (c < 0x800) {
                room(2);
                b[len++] = (byte) (0xc0 | c >> 6);
                b[len++] = (byte) (0x80 | c & 0x3f);
            } else if (Character.isHighSurrogate(c) && k + 1 < n && Character.isLowSurrogate(s.charAt(k + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++k));
                room(4);
                b[len++] = (byte) (0xf0 | cp >> 18);
                b[len++] = (byte) (0x80 | cp >> 12 & 0x3f);
                b[len++] = (byte) (0x80 | cp >> 6 & 0x3f);
                b[len++] = (byte) (0x80 | cp & 0x3f);
            } else if (Character.isSurrogate(c)) {
                room(1);
                b[len++] = '?'; // a lone half, as String.getBytes writes it: UTF-8 has no encoding for it
            } else {
                room(3);
                b[len++] = (byte) (0xe0 | c >> 12);
                b[len++] = (byte) (0x80 | c >> 6 & 0x3f);
                b[len++] = (byte) (0x80 | c & 0x3f);
            }
        }
        return this;
    }

    /** A Jackson tree as JSON text, as Jackson writes it (numbers other than integers in Jackson's own words). */
    JsonOut node(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) return ascii("null");
        switch (n.getNodeType()) {
            case OBJECT -> {
                ascii('{');
                boolean first = true;
                for (Map.Entry<String, JsonNode> e : n.properties()) {
                    if (!first) ascii(',');
                    first = false;
                    quoted(e.getKey()).ascii(':').node(e.getValue());
                }
                return ascii('}');
            }
            case ARRAY -> {
                ascii('[');
                for (int i = 0; i < n.size(); i++) {
                    if (i > 0) ascii(',');
                    node(n.get(i));
                }
                return ascii(']');
            }
            case STRING -> {
                return quoted(n.textValue());
            }
            case BOOLEAN -> {
                return ascii(n.booleanValue() ? "true" : "false");
            }
            default -> {
                if (n.isIntegralNumber() && n.canConvertToLong()) return number(n.longValue());
                return utf8(n.toString()); // other numbers, POJO and binary nodes
            }
        }
    }

    private void escape(char c) {
        switch (c) {
            case '"' -> ascii("\\\"");
            case '\\' -> ascii("\\\\");
            case '\n' -> ascii("\\n");
            case '\r' -> ascii("\\r");
            case '\t' -> ascii("\\t");
            default -> {
                ascii("\\u00");
                room(2);
                b[len++] = HEX[c >> 4];
                b[len++] = HEX[c & 0xf];
            }
        }
    }
}
