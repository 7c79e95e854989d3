package dev.capstan;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A position in UTF-8 JSON text that capstan wrote (the calls a host batch hands out, their arguments): the
 * envelope's keys, strings and integers read in place, any other value skipped over and taken as its span for
 * Jackson. Only what the quick path needs, on the bytes as they are: no tokens, no tree, nothing allocated but
 * the strings read. Text capstan checked and wrote is well-formed; anything else throws {@link IOException}
 * naming the byte, never reads past {@code end}.
 */
final class JsonCursor {
    final byte[] b;
    final int end;
    int i;
    /** The value {@link #integer()} read. */
    long num;

    JsonCursor(byte[] b, int from, int end) {
        this.b = b;
        this.i = from;
        this.end = end;
    }

    /** Skips whitespace; the next byte (-1 at the end). */
    int peek() {
        while (i < end && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) i++;
        return i < end ? b[i] & 0xff : -1;
    }

    /** Consumes {@code c} (after whitespace) or throws. */
    void expect(char c) throws IOException {
        if (peek() != c) throw bad("'" + c + "'");
        i++;
    }

    /**
     * In an object or array just opened, or after one of its members: true if another member follows (its
     * comma consumed), false at the closing {@code close} (consumed).
     */
    boolean more(char close, boolean first) throws IOException {
        int c = peek();
        if (c == close) {
            i++;
            return false;
        }
        if (!first) {
            if (c != ',') throw bad("',' or '" + close + "'");
            i++;
        }
        return true;
    }

    /** An object's key and its colon. */
    String key() throws IOException {
        String k = string();
        expect(':');
        return k;
    }

    /** Names as UTF-8, for {@link #key(byte[][])}. */
    static byte[][] names(String... names) {
        byte[][] out = new byte[names.length][];
        for (int k = 0; k < names.length; k++) out[k] = names[k].getBytes(StandardCharsets.UTF_8);
        return out;
    }

    /** An object's key, matched in place (no String made) against {@code names}: its index, or -1; and its colon. */
    int key(byte[][] names) throws IOException {
        if (peek() != '"') throw bad("a string");
        int start = i + 1;
        int j = start;
        while (j < end && b[j] != '"' && b[j] != '\\') j++;
        if (j >= end || b[j] == '\\') { // escapes (capstan writes none in the names it sends): the slow way
            String k = key();
            for (int n = 0; n < names.length; n++) {
                if (k.equals(new String(names[n], StandardCharsets.UTF_8))) return n;
            }
            return -1;
        }
        i = j + 1;
        expect(':');
        int len = j - start;
        for (int n = 0; n < names.length; n++) {
            byte[] name = names[n];
            if (name.length != len) continue;
            int k = 0;
            while (k < len && b[start + k] == name[k]) k++;
            if (k == len) return n;
        }
        return -1;
    }

    /** A string value, unescaped. */
    String string() throws IOException {
        if (peek() != '"') throw bad("a string");
        int start = ++i;
        while (i < end && b[i] != '"' && b[i] != '\\') i++;
        if (i < end && b[i] == '"') return new String(b, start, i++ - start, StandardCharsets.UTF_8);
        StringBuilder s = new StringBuilder(i - start + 16).append(new String(b, start, i - start, StandardCharsets.UTF_8));
        while (true) {
            if (i >= end) throw bad("the string's end");
            if (b[i] == '"') {
                i++;
                return s.toString();
            }
            if (b[i] != '\\') {
                int run = i;
                while (i < end && b[i] != '"' && b[i] != '\\') i++;
                s.append(new String(b, run, i - run, StandardCharsets.UTF_8));
                continue;
            }
            if (i + 1 >= end) throw bad("an escape");
            char e = (char) b[i + 1];
            i += 2;
            switch (e) {
                case '"', '\\', '/' -> s.append(e);
                case 'b' -> s.append('\b');
                case 'f' -> s.append('\f');
                case 'n' -> s.append('\n');
                case 'r' -> s.append('\r');
                case 't' -> s.append('\t');
                case 'u' -> {
                    if (i + 4 > end) throw bad("four hex digits");
                    int u = 0;
                    for (int k = 0; k < 4; k++) {
                        int d = Character.digit(b[i + k], 16);
                        if (d < 0) throw bad("a hex digit");
                        u = u * 16 + d;
                    }
                    i += 4;
                    s.append((char) u); // a surrogate pair comes as two escapes, each its half
                }
                default -> throw bad("an escape");
            }
        }
    }

    /** An integer without fraction or exponent that fits a long: true and its value in {@link #num}; else false,
     *  nothing consumed. */
    boolean integer() {
        int c = peek();
        int j = i;
        boolean neg = c == '-';
        if (neg) j++;
        int first = j;
        long v = 0;
        while (j < end && b[j] >= '0' && b[j] <= '9' && j - first < 18) v = v * 10 + (b[j++] - '0');
        if (j == first || (j < end && (b[j] == '.' || b[j] == 'e' || b[j] == 'E' || (b[j] >= '0' && b[j] <= '9')))) {
            return false; // a fraction, an exponent, 19 digits or more: Jackson reads it
        }
        i = j;
        num = neg ? -v : v;
        return true;
    }

    /** Skips one value of any kind; its start (its end is {@link #i} after). */
    int skip() throws IOException {
        int c = peek();
        int start = i;
        if (c == '"') {
            skipString();
        } else if (c == '{' || c == '[') {
            int depth = 0;
            while (true) {
                if (i >= end) throw bad("the end of the value at byte " + start);
                byte x = b[i];
                if (x == '"') {
                    skipString();
                    continue;
                }
                i++;
                if (x == '{' || x == '[') depth++;
                else if ((x == '}' || x == ']') && --depth == 0) break;
            }
        } else {
            while (i < end && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n'
                    && b[i] != '\r' && b[i] != '\t') {
                i++;
            }
            if (i == start) throw bad("a value");
        }
        return start;
    }

    private void skipString() throws IOException {
        i++;
        while (i < end && b[i] != '"') i += b[i] == '\\' ? 2 : 1;
        if (i >= end) throw bad("the string's end");
        i++;
    }

    /** Whether the value here is the literal {@code word} (consumed if so). */
    boolean literal(String word) {
        peek();
        int n = word.length();
        if (i + n > end) return false;
        for (int k = 0; k < n; k++) {
            if (b[i + k] != word.charAt(k)) return false;
        }
        if (i + n < end && Character.isLetterOrDigit(b[i + n])) return false;
        i += n;
        return true;
    }

    /** The text of {@code [from, i)}. */
    String text(int from) {
        return new String(b, from, i - from, StandardCharsets.UTF_8);
    }

    private IOException bad(String wanted) {
        return new IOException("capstan's JSON: expected " + wanted + " at byte " + i + " of " + end);
    }
}
