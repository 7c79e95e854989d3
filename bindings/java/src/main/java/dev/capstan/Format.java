package dev.capstan;

/** Wire formats ({@code CAPSTAN_FORMAT_*}): how tools are exported, calls parsed and results written. */
public enum Format {
    /** capstan's own normalized calls and results, and tool descriptions. */
    DESCRIBE(0),
    OPENAI_CHAT(1),
    OPENAI_RESPONSES(2),
    ANTHROPIC(3),
    GEMINI(4),
    /** Model Context Protocol. */
    MCP(5);

    final int code;

    Format(int code) {
        this.code = code;
    }
}
