package dev.capstan;

import java.util.Locale;

/**
 * A log message's severity ({@code capstan_log_level}, {@code CAPSTAN_LOG_*}): MCP's levels, the syslog
 * severities of RFC 5424, least severe first ({@link ToolCall#log}).
 */
public enum LogLevel {
    DEBUG, INFO, NOTICE, WARNING, ERROR, CRITICAL, ALERT, EMERGENCY;

    /** MCP's name of the level, e.g. {@code "warning"}. */
    public String mcpName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The level of MCP's name ({@code "debug"} to {@code "emergency"}, exactly as MCP spells them).
     *
     * @throws IllegalArgumentException for any other name, listing MCP's
     */
    public static LogLevel ofMcpName(String name) {
        for (LogLevel l : values()) {
            if (l.mcpName().equals(name)) return l;
        }
        StringBuilder names = new StringBuilder();
        for (LogLevel l : values()) names.append(names.isEmpty() ? "" : ", ").append(l.mcpName());
        throw new IllegalArgumentException("log level " + (name == null ? "null" : '"' + name + '"')
                + " is not one of " + names);
    }

    /** null for a value this binding does not know (a newer library). */
    static LogLevel of(int code) {
        LogLevel[] v = values();
        return code >= 0 && code < v.length ? v[code] : null;
    }
}
