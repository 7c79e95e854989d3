package dev.capstan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * How a batch runs ({@code capstan_exec_options}). Immutable; the {@code with}-methods return a copy.
 *
 * @param sequential run the calls one by one, in order
 * @param limit at most this many calls at once, 0 = 8
 * @param timeoutMs overrides every tool's timeout when &gt; 0
 * @param deadlineMs bounds every call from submission, waits included, 0 = none
 * @param strictNulls drop the nulls OpenAI strict mode sends for optional arguments
 * @param approvedIds ids of calls already approved by the user
 * @param runId the run (a conversation, a workflow) the calls belong to: with a journal on the registry
 *     ({@link Registry#setJournal}) each call is recorded and answered under this id plus its call id; null:
 *     the journal is not used
 */
public record ExecOptions(boolean sequential, int limit, int timeoutMs, int deadlineMs, boolean strictNulls,
        List<String> approvedIds, String runId) {
    public static final ExecOptions DEFAULTS = new ExecOptions(false, 0, 0, 0, false, List.of(), null);

    public ExecOptions {
        approvedIds = approvedIds == null ? List.of() : List.copyOf(approvedIds);
    }

    /** The options without a run id (the record's shape before the journal). */
    public ExecOptions(boolean sequential, int limit, int timeoutMs, int deadlineMs, boolean strictNulls,
            List<String> approvedIds) {
        this(sequential, limit, timeoutMs, deadlineMs, strictNulls, approvedIds, null);
    }

    public ExecOptions withSequential(boolean b) {
        return new ExecOptions(b, limit, timeoutMs, deadlineMs, strictNulls, approvedIds, runId);
    }

    public ExecOptions withLimit(int n) {
        return new ExecOptions(sequential, n, timeoutMs, deadlineMs, strictNulls, approvedIds, runId);
    }

    public ExecOptions withTimeoutMs(int ms) {
        return new ExecOptions(sequential, limit, ms, deadlineMs, strictNulls, approvedIds, runId);
    }

    public ExecOptions withDeadlineMs(int ms) {
        return new ExecOptions(sequential, limit, timeoutMs, ms, strictNulls, approvedIds, runId);
    }

    public ExecOptions withStrictNulls(boolean b) {
        return new ExecOptions(sequential, limit, timeoutMs, deadlineMs, b, approvedIds, runId);
    }

    public ExecOptions withApprovedIds(List<String> ids) {
        return new ExecOptions(sequential, limit, timeoutMs, deadlineMs, strictNulls, ids, runId);
    }

    /** {@code runId}: see the record's doc. */
    public ExecOptions withRunId(String id) {
        return new ExecOptions(sequential, limit, timeoutMs, deadlineMs, strictNulls, approvedIds, id);
    }

    /** The C struct in {@code a} (the defaults of its INIT macro, then our fields). */
    MemorySegment toNative(Arena a) throws Throwable {
        return toNative(a, 0);
    }

    /** True when the C struct would hold only the defaults: a NULL options pointer says the same. */
    boolean isDefault() {
        return !sequential && limit == 0 && timeoutMs == 0 && deadlineMs == 0 && !strictNulls
                && approvedIds.isEmpty() && runId == null;
    }

    // Offsets computed once: Native.off walks the layout by name, which costs on the per-call path.
    private static final long FLAGS = Native.off(Native.EXEC_OPTIONS, "flags");
    private static final long LIMIT = Native.off(Native.EXEC_OPTIONS, "limit");
    private static final long TIMEOUT = Native.off(Native.EXEC_OPTIONS, "timeout_ms");
    private static final long DEADLINE = Native.off(Native.EXEC_OPTIONS, "deadline_ms");
    private static final long APPROVED = Native.off(Native.EXEC_OPTIONS, "approved_ids");
    private static final long APPROVED_COUNT = Native.off(Native.EXEC_OPTIONS, "approved_count");
    private static final long RUN_ID = Native.off(Native.EXEC_OPTIONS, "run_id");
    private static final long RUN_ID_LEN = Native.off(Native.EXEC_OPTIONS, "run_id_len");

    /** As {@link #toNative(Arena)}, with {@code extraFlags} (CAPSTAN_EXEC_*) set too. */
    MemorySegment toNative(java.lang.foreign.SegmentAllocator a, int extraFlags) throws Throwable {
        MemorySegment s = a.allocate(Native.EXEC_OPTIONS);
        s.fill((byte) 0);
        s.set(Native.U32, 0, (int) Native.EXEC_OPTIONS.byteSize());
        int flags = (sequential ? 1 : 0) | (strictNulls ? 4 : 0) | extraFlags;
        s.set(Native.U32, FLAGS, flags);
        s.set(Native.U32, LIMIT, limit);
        s.set(Native.U32, TIMEOUT, timeoutMs);
        s.set(Native.U32, DEADLINE, deadlineMs);
        if (!approvedIds.isEmpty()) {
            MemorySegment arr = a.allocate(Native.PTR, approvedIds.size());
            for (int i = 0; i < approvedIds.size(); i++) {
                arr.setAtIndex(Native.PTR, i, a.allocateFrom(approvedIds.get(i)));
            }
            s.set(Native.PTR, APPROVED, arr);
            s.set(Native.SIZE, APPROVED_COUNT, approvedIds.size());
        }
        if (runId != null) {
            MemorySegment id = a.allocateFrom(runId);
            s.set(Native.PTR, RUN_ID, id);
            s.set(Native.SIZE, RUN_ID_LEN, Native.utf8Len(id));
        }
        return s;
    }
}
