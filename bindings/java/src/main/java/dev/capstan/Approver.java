package dev.capstan;

/**
 * Decides calls of tools that require approval. Runs on a pool thread (or the thread running the batch);
 * it must decide each request exactly once, now or later from any thread. If it throws before
 * deciding, the call is denied with the exception's message.
 */
@FunctionalInterface
public interface Approver {
    void onApproval(ApprovalRequest request) throws Exception;
}
