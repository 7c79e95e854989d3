package dev.capstan;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A call of a tool flagged {@link ToolOptions#requiresApproval()} waiting for a decision. Decide it exactly
 * once, now or later, from any thread.
 */
public final class ApprovalRequest {
    private final MemorySegment approval;
    private final String tool;
    private final String id;
    private final String argumentsJson;
    private final AtomicBoolean decided = new AtomicBoolean();

    ApprovalRequest(MemorySegment approval, String tool, String id, String argumentsJson) {
        this.approval = approval;
        this.tool = tool;
        this.id = id;
        this.argumentsJson = argumentsJson;
    }

    public String tool() {
        return tool;
    }

    public String id() {
        return id;
    }

    /** The validated arguments, compact JSON. */
    public String argumentsJson() {
        return argumentsJson;
    }

    public void approve() {
        decide(true, null);
    }

    /** Denies the call; the model reads {@code reason} (may be null). */
    public void deny(String reason) {
        decide(false, reason);
    }

    boolean decided() {
        return decided.get();
    }

    private void decide(boolean approve, String reason) {
        if (!decided.compareAndSet(false, true)) {
            throw new IllegalStateException("approval of call " + id + " already decided");
        }
        try {
            Native.approvalDecide(approval, approve, reason);
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
