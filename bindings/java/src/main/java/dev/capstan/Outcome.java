package dev.capstan;

/** How a call ended ({@code CAPSTAN_OUTCOME_*}). */
public enum Outcome {
    OK, TOOL_ERROR, INVALID_ARGUMENTS, UNKNOWN_TOOL, TIMEOUT, CANCELLED, DENIED;

    static Outcome of(int code) {
        Outcome[] v = values();
        return code >= 0 && code < v.length ? v[code] : TOOL_ERROR;
    }

    /** The name in results JSON, e.g. {@code "invalid_arguments"}. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    static Outcome ofWire(String s) {
        return s == null ? TOOL_ERROR : valueOf(s.toUpperCase(java.util.Locale.ROOT));
    }
}
