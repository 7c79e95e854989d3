package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A capstan function failed: its status and the structured fields of
 * {@code capstan_error_json} (the message is for people; branch on the fields).
 */
public class CapstanException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int statusCode;
    private final String status;
    private final transient Provider provider;
    private final String pointer;

    /**
     * What the provider's error body said ({@code CAPSTAN_ERR_PROVIDER_ERROR} only).
     *
     * @param kind the KIND of the message: the provider's type, code or status
     * @param message the provider's own message
     * @param type its error type or status name, or null
     * @param code its code as text, or null
     * @param httpStatus the HTTP status the body carries, or null
     * @param retryAfterMs the retry delay the body carries, or null
     */
    public record Provider(String kind, String message, String type, String code, Integer httpStatus,
            Long retryAfterMs) {}

    CapstanException(int statusCode, String status, String message, Provider provider, String pointer) {
        super(message == null || message.isEmpty() ? status : message);
        this.statusCode = statusCode;
        this.status = status;
        this.provider = provider;
        this.pointer = pointer;
    }

    static CapstanException fromJson(int statusCode, String json) {
        String name = Native.statusName(statusCode);
        if (json == null) return new CapstanException(statusCode, name, name, null, null);
        JsonNode n = Json.read(json);
        // the thread's last error may be another function's if a host moved threads: trust our status
        String message = n.path("status_code").asInt(-1) == statusCode ? n.path("message").asText(name) : name;
        Provider p = null;
        JsonNode pn = n.path("provider");
        if (pn.isObject()) {
            p = new Provider(textOrNull(pn, "kind"), textOrNull(pn, "message"), textOrNull(pn, "type"),
                    textOrNull(pn, "code"), pn.path("http_status").isNumber() ? pn.get("http_status").asInt() : null,
                    pn.path("retry_after_ms").isNumber() ? pn.get("retry_after_ms").asLong() : null);
        }
        return new CapstanException(statusCode, name, message, p, textOrNull(n, "pointer"));
    }

    private static String textOrNull(JsonNode n, String key) {
        JsonNode v = n.get(key);
        return v == null || v.isNull() ? null : v.asText();
    }

    /** The status number ({@code CAPSTAN_ERR_*} value). */
    public int statusCode() {
        return statusCode;
    }

    /** The status constant's name, e.g. {@code "CAPSTAN_ERR_INVALID_SCHEMA"}. */
    public String status() {
        return status;
    }

    /** The provider's error (for {@code CAPSTAN_ERR_PROVIDER_ERROR}), else null. */
    public Provider provider() {
        return provider;
    }

    /** JSON Pointer of the offending place in a tool's schema (INVALID_SCHEMA), else null. */
    public String pointer() {
        return pointer;
    }
}
