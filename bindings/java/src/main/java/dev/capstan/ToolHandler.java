package dev.capstan;

/**
 * A tool's body. Runs on one of capstan's pool threads (attached to the JVM by the FFM runtime and
 * named {@code capstan-N}) or on the thread that called {@link Registry#execute}, so it must be thread-safe.
 *
 * <p>What it returns is the call's content: a {@link CharSequence} is passed as text, anything else is
 * written as JSON by Jackson ({@code null} as {@code null}); a {@link java.util.concurrent.CompletionStage}
 * makes the call asynchronous: it completes when the stage does, from whatever thread completes it.
 * An exception (thrown, or completing the stage) becomes the call's {@code tool_error} result, the model
 * reading the exception's message; it never reaches capstan.
 */
@FunctionalInterface
public interface ToolHandler {
    Object call(ToolCall call) throws Exception;
}
