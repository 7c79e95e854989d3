package dev.capstan;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Path;

/**
 * Where a registry records its calls and finds them again ({@code capstan_journal}, issue #47; see
 * docs/durable-calls.md). Give it to {@link Registry#setJournal} and run calls with
 * {@link ExecOptions#withRunId}: each call is recorded under the run id plus its call id, and a call with a
 * completed record is answered from it without running its tool. Close it when done; a registry using it
 * keeps it alive until the registry is closed or given another journal.
 */
public final class Journal implements AutoCloseable {
    /**
     * A journal kept by the host (its own database or durable engine), for {@link #of(Store)}. Both methods
     * run on the thread running the call (several at once), must not call into a registry using this
     * journal, and an exception from either fails the call (a failed {@code record} of a {@code started}
     * record keeps the tool from running).
     */
    public interface Store {
        /**
         * Stores one record (a JSON object) durably before returning; a later {@code completed} record of a
         * (run, call) key replaces its {@code started}.
         */
        void record(String recordJson) throws Exception;

        /** The record of this key ({@code completed} if any, else {@code started}) as given to record; null if none. */
        String lookup(String runId, String callId) throws Exception;
    }

    private static final MethodHandle OPEN_JSONL = Native.fn("capstan_journal_open_jsonl", Native.U32, Native.PTR,
            Native.SIZE, Native.PTR);
    private static final MethodHandle OPEN_SQLITE = Native.fn("capstan_journal_open_sqlite", Native.U32, Native.PTR,
            Native.SIZE, Native.U32, Native.PTR);
    private static final MethodHandle NEW = Native.fn("capstan_journal_new", Native.U32, Native.PTR, Native.PTR);
    private static final MethodHandle ANSWER_SET = Native.fn("capstan_journal_answer_set", Native.U32, Native.PTR,
            Native.PTR, Native.SIZE);
    private static final MethodHandle FREE = Native.fn("capstan_journal_free", null, Native.PTR);
    private static final MethodHandle SET_JOURNAL = Native.fn("capstan_registry_set_journal", Native.U32, Native.PTR,
            Native.PTR, Native.U32);

    static final MemoryLayout CALLBACKS = MemoryLayout.structLayout(
            Native.U32.withName("struct_size"), MemoryLayout.paddingLayout(4),
            Native.PTR.withName("record"), Native.PTR.withName("lookup"), Native.PTR.withName("user_data"),
            Native.PTR.withName("destroy"));

    private static final MemorySegment RECORD_STUB;
    private static final MemorySegment LOOKUP_STUB;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            RECORD_STUB = Native.LINKER.upcallStub(l.findStatic(Journal.class, "onRecord", MethodType.methodType(
                    int.class, MemorySegment.class, MemorySegment.class, long.class)),
                    FunctionDescriptor.of(Native.U32, Native.PTR, Native.PTR, Native.SIZE), Arena.global());
            LOOKUP_STUB = Native.LINKER.upcallStub(l.findStatic(Journal.class, "onLookup", MethodType.methodType(
                    int.class, MemorySegment.class, MemorySegment.class, long.class, MemorySegment.class, long.class,
                    MemorySegment.class)),
                    FunctionDescriptor.of(Native.U32, Native.PTR, Native.PTR, Native.SIZE, Native.PTR, Native.SIZE,
                            Native.PTR), Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private MemorySegment ptr;

    private Journal(MemorySegment ptr) {
        this.ptr = ptr;
    }

    /**
     * Opens (creating it if absent) a JSON Lines journal: record/replay fixtures a test checks in. One
     * process at a time.
     *
     * @throws CapstanException INVALID_ARGUMENT if the file cannot be opened or holds a line that is not a
     *     record (the message names the line; the file is left as it was)
     */
    public static Journal openJsonl(Path path) {
        return open(path, (p, len, out) -> (int) OPEN_JSONL.invokeExact(p, len, out));
    }

    /**
     * Opens (creating it if absent) an SQLite journal: WAL, one transaction per record, several processes on
     * one file; {@code fullSync} fsyncs every commit.
     *
     * @throws CapstanException UNSUPPORTED in a library built without the {@code journal-sqlite} feature;
     *     INVALID_ARGUMENT if the database cannot be opened
     */
    public static Journal openSqlite(Path path, boolean fullSync) {
        int flags = fullSync ? 1 : 0; // CAPSTAN_JOURNAL_FULL_SYNC
        return open(path, (p, len, out) -> (int) OPEN_SQLITE.invokeExact(p, len, flags, out));
    }

    /** A journal kept by {@code store} ({@code capstan_journal_new}). */
    public static Journal of(Store store) {
        if (store == null) throw new IllegalArgumentException("Journal.of: store is null");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cbs = Native.initStruct(a, CALLBACKS);
            cbs.set(Native.PTR, Native.off(CALLBACKS, "record"), RECORD_STUB);
            cbs.set(Native.PTR, Native.off(CALLBACKS, "lookup"), LOOKUP_STUB);
            cbs.set(Native.PTR, Native.off(CALLBACKS, "user_data"), Native.keep(store));
            cbs.set(Native.PTR, Native.off(CALLBACKS, "destroy"), Native.DESTROY_STUB);
            MemorySegment out = a.allocate(Native.PTR);
            Native.check((int) NEW.invokeExact(cbs, out)); // on failure destroy has dropped the handle
            return new Journal(out.get(Native.PTR, 0));
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private interface Opener {
        int open(MemorySegment path, long len, MemorySegment out) throws Throwable;
    }

    private static Journal open(Path path, Opener opener) {
        if (path == null) throw new IllegalArgumentException("journal path is null");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = Native.utf8(a, path.toString());
            MemorySegment out = a.allocate(Native.PTR);
            Native.check(opener.open(p, Native.utf8Len(p), out));
            return new Journal(out.get(Native.PTR, 0));
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** capstan_registry_set_journal, holding the journal's lock so that a close cannot free it meanwhile. */
    static void attach(MemorySegment reg, Journal journal, boolean replay) throws Throwable {
        int flags = replay ? 1 : 0; // CAPSTAN_JOURNAL_REPLAY
        if (journal == null) {
            Native.check((int) SET_JOURNAL.invokeExact(reg, MemorySegment.NULL, flags));
            return;
        }
        synchronized (journal) {
            if (journal.ptr == null) throw new IllegalStateException("the journal is closed");
            Native.check((int) SET_JOURNAL.invokeExact(reg, journal.ptr, flags));
        }
    }

    /** Frees the journal; registries using it keep it until they stop. A second close does nothing. */
    @Override
    public synchronized void close() {
        if (ptr == null) return;
        try {
            FREE.invokeExact(ptr);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            ptr = null;
        }
    }

    static int onRecord(MemorySegment userData, MemorySegment json, long len) {
        try {
            if (!(Native.get(userData) instanceof Store s)) return 1;
            s.record(Native.text(json, len));
            return 0;
        } catch (Throwable t) {
            return 1; // the call fails; nothing may cross into C
        }
    }

    static int onLookup(MemorySegment userData, MemorySegment run, long runLen, MemorySegment call, long callLen,
            MemorySegment answer) {
        try {
            if (!(Native.get(userData) instanceof Store s)) return 1;
            String found = s.lookup(Native.text(run, runLen), Native.text(call, callLen));
            if (found == null) return 0;
            try (Arena a = Arena.ofConfined()) {
                MemorySegment f = Native.utf8(a, found);
                return (int) ANSWER_SET.invokeExact(answer, f, Native.utf8Len(f)) == Native.OK ? 0 : 1;
            }
        } catch (Throwable t) {
            return 1;
        }
    }
}
