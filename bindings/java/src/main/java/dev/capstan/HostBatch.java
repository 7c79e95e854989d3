package dev.capstan;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;

/**
 * A batch through capstan's host batches ({@code capstan_host_batch_*}): the calls of quick tools
 * ({@link ToolOptions#quick()}) come out checked in one buffer, run here on the calling thread in call order,
 * and their results go back in one: three downcalls and no upcall per batch. What a quick call costs here is
 * kept to the work itself: the handed-out calls are read in place ({@link JsonCursor}), an {@link Tool}
 * method's arguments bound from them straight to its parameters, the answers written as UTF-8
 * ({@link JsonOut}), the results read by the caller's {@link Results} from bytes; the memory, native and heap,
 * is a per-thread scratch reused by every batch of the thread (no arena, no segment per call; a nested batch
 * on the same thread, from inside a tool, takes a fresh one). The batch's other tools run on capstan's pool.
 */
final class HostBatch {
    private HostBatch() {}

    /** Reads a batch's results JSON (UTF-8, {@code len} bytes of {@code b}) into what the caller returns. */
    interface Results<T> {
        T read(byte[] b, int len) throws IOException;
    }

    /** {@link Results} as one String: {@link Registry#executeJson}. */
    static final Results<String> TEXT = (b, len) -> new String(b, 0, len, StandardCharsets.UTF_8);

    // The downcalls take addresses as numbers: the scratch's memory is the thread's and outlives the call
    // (reachabilityFence), so no segment is made, checked or acquired per call for them.
    private static final ValueLayout.OfLong A = ValueLayout.JAVA_LONG;
    private static final MethodHandle BEGIN = Native.fn("capstan_host_batch_begin", Native.U32, A, A, A, A, A, A, A);
    private static final MethodHandle FINISH = Native.fn("capstan_host_batch_finish", Native.U32, A, A, A,
            Native.U32, A, A);
    private static final MethodHandle FREE = Native.fn("capstan_host_batch_free", null, A);
    private static final MethodHandle CANCEL = Native.fn("capstan_host_batch_cancel", null, A);

    // The scratch's native memory: the out slots (batch, calls, calls length, results, results length), then
    // the calls text, then the answers (or the exec options, when not the defaults, before them).
    private static final int CALLS = 64;

    /** A thread's reusable memory: {@code busy} while a batch of the thread uses it. */
    private static final class Scratch {
        private static final int SIZE = 4096;
        private static final int KEEP = 1 << 20; // a batch that grew a buffer past this gives it back
        MemorySegment buf = Arena.ofAuto().allocate(SIZE, 16);
        /** {@link #buf} as a buffer: its out slots read through it (cheaper than a segment's checks). */
        ByteBuffer slots = view(buf);
        byte[] in = new byte[SIZE];
        final JsonOut out = new JsonOut();
        boolean busy;

        /** {@link #buf}, grown to at least {@code need} bytes. */
        MemorySegment buf(long need) {
            if (buf.byteSize() < need) set(Arena.ofAuto().allocate(Math.max(need, buf.byteSize() * 2), 16));
            return buf;
        }

        private void set(MemorySegment m) {
            buf = m;
            slots = view(m);
        }

        private static ByteBuffer view(MemorySegment m) {
            return m.asSlice(0, CALLS).asByteBuffer().order(ByteOrder.nativeOrder());
        }

        /** The {@code len} bytes at {@code address} (capstan's lent text) copied into {@link #in}. */
        byte[] read(long address, long len) {
            if (len > Integer.MAX_VALUE - 8) throw new IllegalStateException("capstan lent " + len + " bytes");
            if (in.length < len) in = new byte[(int) Math.max(len, Math.min(in.length * 2L, Integer.MAX_VALUE - 8))];
            MemorySegment.copy(ALL, ValueLayout.JAVA_BYTE, address, in, 0, (int) len);
            return in;
        }

        void release() {
            busy = false;
            if (buf.byteSize() > KEEP) set(Arena.ofAuto().allocate(SIZE, 16));
            if (in.length > KEEP) in = new byte[SIZE];
            if (out.b.length > KEEP) out.b = new byte[256];
        }
    }

    /** All memory: capstan's lent texts are read through it by address, no segment made per text. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /** Runs the batch; its results JSON (that of {@code capstan_registry_execute}) read by {@code results}. */
    static <T> T execute(MemorySegment reg, byte[] calls, ExecOptions options, Map<String, ToolEntry> quick,
            InFlight inFlight, BooleanSupplier closing, Results<T> results) throws Throwable {
        Scratch scratch = SCRATCH.get();
        if (scratch.busy) scratch = new Scratch(); // a quick tool executing on its own thread: its own memory
        scratch.busy = true;
        try {
            return run(scratch, reg, calls, options, quick, inFlight, closing, results);
        } finally {
            scratch.release();
        }
    }

    private static <T> T run(Scratch s, MemorySegment reg, byte[] calls, ExecOptions options,
            Map<String, ToolEntry> quick, InFlight inFlight, BooleanSupplier closing, Results<T> results)
            throws Throwable {
        long after = (CALLS + calls.length + 15) & ~15L; // (ptr, len) texts: no NUL needed
        long optionsSize = options.isDefault() ? 0 : optionsSize(options);
        MemorySegment m = s.buf(after + optionsSize + 256);
        MemorySegment.copy(calls, 0, m, ValueLayout.JAVA_BYTE, CALLS, calls.length);
        long opts = 0;
        if (optionsSize > 0) { // its struct (and approved ids, run id) after the calls; the answers after that
            opts = options.toNative(SegmentAllocator.slicingAllocator(m.asSlice(after, optionsSize)), 0).address();
            after += optionsSize;
        }
        long base = m.address();
        int st = (int) BEGIN.invokeExact(reg.address(), base + CALLS, (long) calls.length, opts, base, base + 8,
                base + 16);
        Native.check(st);
        ByteBuffer slot = s.slots;
        long batch = slot.getLong(0);
        int held = inFlight.add(batch);
        if (closing.getAsBoolean()) cancel(batch);
        try {
            JsonOut out = s.out;
            out.len = 0;
            long handedLen = slot.getLong(16);
            answer(s.read(slot.getLong(8), handedLen), (int) handedLen, quick, out);
            MemorySegment ans = m;
            long at = after;
            if (after + out.len > m.byteSize()) { // longer than the scratch has left: its own memory
                ans = Arena.ofAuto().allocate(Math.max(1, out.len));
                at = 0;
            }
            MemorySegment.copy(out.b, 0, ans, ValueLayout.JAVA_BYTE, at, out.len);
            st = (int) FINISH.invokeExact(batch, ans.address() + at, (long) out.len, -1, base + 24, base + 32);
            Reference.reachabilityFence(ans);
            Native.check(st);
            long resultsLen = slot.getLong(32);
            return results.read(s.read(slot.getLong(24), resultsLen), (int) resultsLen);
        } finally {
            inFlight.remove(held, batch);
            FREE.invokeExact(batch);
            Reference.reachabilityFence(m);
        }
    }

    /** At least the bytes {@link ExecOptions#toNative} allocates for {@code o}, alignment included. */
    private static long optionsSize(ExecOptions o) {
        long n = Native.EXEC_OPTIONS.byteSize() + 64 + 8L * o.approvedIds().size();
        for (String id : o.approvedIds()) n += 3L * id.length() + 1;
        if (o.runId() != null) n += 3L * o.runId().length() + 1;
        return (n + 15) & ~15L;
    }

    /** Reads capstan's text in {@code slot} (length in {@code lenSlot}), which it gave away, then frees it. */
    static <T> T take(MemorySegment slot, MemorySegment lenSlot, Results<T> results) throws Throwable {
        MemorySegment p = slot.get(Native.PTR, 0);
        long len = lenSlot.get(Native.SIZE, 0);
        if (p.address() == 0) return null;
        try {
            if (len > Integer.MAX_VALUE - 8) throw new IllegalStateException("capstan gave " + len + " bytes");
            return results.read(p.reinterpret(len).toArray(ValueLayout.JAVA_BYTE), (int) len);
        } finally {
            Native.string_free.invokeExact(p);
        }
    }

    /** capstan_host_batch_cancel: calls not started end cancelled, running ones keep their own result. */
    static void cancel(long batch) {
        try {
            CANCEL.invokeExact(batch); // a freed batch: no-op (a checked handle)
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Runs every handed-out call ({@code [{"index","id","name","arguments"}]}, the first {@code len} bytes of
     * {@code handed}) and writes the answers array to {@code out}.
     */
    static void answer(byte[] handed, int len, Map<String, ToolEntry> quick, JsonOut out) throws IOException {
        JsonCursor c = new JsonCursor(handed, 0, len);
        c.expect('[');
        out.ascii('[');
        for (boolean first = true; c.more(']', first); first = false) {
            if (!first) out.ascii(',');
            call(c, quick, out);
        }
        out.ascii(']');
    }

    /**
     * One handed-out call: its answer, {@code {<value>,"index":N}}. An {@link Tool} method's arguments, in
     * capstan's key order (the arguments last), are bound as they are read; any other handler gets their text.
     */
    private static void call(JsonCursor c, Map<String, ToolEntry> quick, JsonOut out) throws IOException {
        long index = -1;
        int id = -1; // where the id's string starts: read only for a handler that gets a ToolCall
        String name = null;
        String args = null;
        boolean answered = false;
        c.expect('{');
        out.ascii('{');
        for (boolean first = true; c.more('}', first); first = false) {
            switch (c.key(ENVELOPE)) {
                case 0 -> {
                    if (!c.integer()) throw new IOException("a handed-out call's index is not an integer");
                    index = c.num;
                }
                case 1 -> id = c.skip();
                case 2 -> name = c.string();
                case 3 -> {
                    ToolEntry e = name == null ? null : quick.get(name);
                    if (e != null && e.handler instanceof MethodTool m && !answered) {
                        run(e, m, c, null, null, name, out);
                        answered = true;
                    } else {
                        args = c.text(c.skip());
                    }
                }
                default -> c.skip();
            }
        }
        if (!answered) {
            ToolEntry e = name == null ? null : quick.get(name);
            String idText = id < 0 ? null : new JsonCursor(c.b, id, c.end).string();
            run(e, e != null && e.handler instanceof MethodTool m ? m : null, null, args == null ? "{}" : args,
                    idText, name, out);
        }
        out.ascii(",\"index\":").number(index).ascii('}');
    }

    private static final byte[][] ENVELOPE = JsonCursor.names("index", "id", "name", "arguments");

    /**
     * Runs {@code e}'s handler and writes its answer's value ({@code "json":...}): a method's arguments read at
     * {@code c} (left after them, whatever the tool does) or else from {@code args}, the text any other
     * handler gets.
     */
    private static void run(ToolEntry e, MethodTool m, JsonCursor c, String args, String id, String name,
            JsonOut out) throws IOException {
        if (e == null) {
            if (c != null) c.skip();
            error(out, "tool \"" + name + "\" is quick but has no handler in this Java registry");
            return;
        }
        int mark = out.len;
        Object[] values = null;
        try {
            if (m != null && c != null) {
                int from = c.i;
                try {
                    values = m.bind(c);
                } catch (IOException | RuntimeException bad) {
                    c.i = from; // on past the arguments, whatever stopped the binding
                    c.skip();
                    throw bad;
                }
            }
            Object v;
            if (m != null) v = m.invoke(values != null ? values : m.bind(args));
            else v = e.handler.call(new ToolCall(MemorySegment.NULL, id, name, args));
            if (v instanceof CompletionStage<?> stage) v = stage.toCompletableFuture().join();
            put(out, v);
        } catch (Throwable t) {
            out.len = mark;
            error(out, ToolEntry.describe(t));
        }
    }

    private static void error(JsonOut out, String message) {
        out.ascii("\"error\":").quoted(message);
    }

    /** The answer's value for a handler's return value: text, content parts, or JSON. */
    private static void put(JsonOut out, Object v) {
        String parts = ToolEntry.partsOf(v);
        if (parts != null) {
            out.ascii("\"parts\":").utf8(parts);
        } else if (v instanceof CharSequence cs) {
            out.ascii("\"text\":").quoted(cs);
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            out.ascii("\"json\":").number(((Number) v).longValue()); // what Jackson writes for these
        } else if (v instanceof Boolean bool) {
            out.ascii(bool ? "\"json\":true" : "\"json\":false");
        } else {
            out.ascii("\"json\":").utf8(Json.write(v));
        }
    }
}
