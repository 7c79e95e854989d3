package dev.capstan;

/**
 * The built-in search tool ({@link Registry#addSearchTool}). Immutable; null strings and 0 mean capstan's
 * defaults.
 *
 * @param name the tool's name; null: {@code tool_search}
 * @param description what the model reads; null: capstan's default (search by what a tool does; found tools
 *     are callable from the next turn)
 * @param limit tools listed per search, 1 to 100; 0: 5
 * @param regex the model's query is a regular expression (Rust syntax) rather than words
 */
public record SearchToolOptions(String name, String description, int limit, boolean regex) {
    public static final SearchToolOptions DEFAULTS = new SearchToolOptions(null, null, 0, false);

    public SearchToolOptions withName(String n) {
        return new SearchToolOptions(n, description, limit, regex);
    }

    public SearchToolOptions withDescription(String d) {
        return new SearchToolOptions(name, d, limit, regex);
    }

    public SearchToolOptions withLimit(int n) {
        return new SearchToolOptions(name, description, n, regex);
    }

    public SearchToolOptions withRegex(boolean b) {
        return new SearchToolOptions(name, description, limit, b);
    }
}
