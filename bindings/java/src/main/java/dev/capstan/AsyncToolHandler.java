package dev.capstan;

import java.util.concurrent.CompletionStage;

/** A tool whose result comes later: see {@link ToolHandler} for content and errors. */
@FunctionalInterface
public interface AsyncToolHandler {
    CompletionStage<?> call(ToolCall call) throws Exception;
}
