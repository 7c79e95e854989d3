package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;

/**
 * A batch through capstan's host batches ({@code capstan_host_batch_*}): the calls of quick tools
 * ({@link ToolOptions#quick()}) come out checked in one buffer, run here on the calling thread in call order,
 * and their results go back in one: three downcalls, one Jackson parse of the handed-out calls and no upcall
 * per batch. The native memory is a per-thread scratch segment reused by every batch of the thread (no arena
 * per call; a nested batch on the same thread, from inside a tool, takes a fresh one). The batch's other
 * tools run on capstan's pool meanwhile.
 */
final class HostBatch {
    private HostBatch() {}

    /** A thread's reusable native memory: {@code busy} while a batch of the thread uses it. */
    private static final class Scratch {
        MemorySegment buf = Arena.ofAuto().allocate(4096, 16);
        boolean busy;

        /** An allocator over at least {@code need} bytes: this buffer, grown if too small. */
        SegmentAllocator allocator(long need) {
            if (buf.byteSize() < need) buf = Arena.ofAuto().allocate(Math.max(need, buf.byteSize() * 2), 16);
            return SegmentAllocator.slicingAllocator(buf);
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);
    // out pointers and lengths, exec options, alignment slack: what a batch needs besides its two texts
    private static final long FIXED = 4 * 8 + Native.EXEC_OPTIONS.byteSize() + 64;

    /** Runs the batch and returns the results JSON of {@code capstan_registry_execute}. */
    static String execute(MemorySegment reg, String callsJson, ExecOptions options, Map<String, ToolEntry> quick,
            Set<MemorySegment> inFlight, BooleanSupplier closing) throws Throwable {
        Scratch scratch = SCRATCH.get();
        if (scratch.busy) { // a quick tool executing on its own thread: its own memory
            try (Arena a = Arena.ofConfined()) {
                return run(a, reg, callsJson, options, quick, inFlight, closing);
            }
        }
        scratch.busy = true;
        try {
            byte[] calls = callsJson.getBytes(StandardCharsets.UTF_8);
            return run(scratch.allocator(FIXED + 2L * calls.length + 256), reg, calls, options, quick, inFlight, closing);
        } finally {
            scratch.busy = false;
        }
    }

    private static String run(SegmentAllocator a, MemorySegment reg, String callsJson, ExecOptions options,
            Map<String, ToolEntry> quick, Set<MemorySegment> inFlight, BooleanSupplier closing) throws Throwable {
        return run(a, reg, callsJson.getBytes(StandardCharsets.UTF_8), options, quick, inFlight, closing);
    }

    private static String run(SegmentAllocator a, MemorySegment reg, byte[] callsJson, ExecOptions options,
            Map<String, ToolEntry> quick, Set<MemorySegment> inFlight, BooleanSupplier closing) throws Throwable {
        MemorySegment slots = a.allocate(Native.PTR, 4); // batch, calls, calls length, results (+ its length)
        MemorySegment c = bytes(a, callsJson);
        MemorySegment opts = options.isDefault() ? MemorySegment.NULL : options.toNative(a, 0);
        Native.check((int) Native.host_batch_begin.invokeExact(reg, c, (long) callsJson.length, opts, slots,
                slots.asSlice(8), slots.asSlice(16)));
        MemorySegment batch = slots.get(Native.PTR, 0);
        if (inFlight != null) {
            inFlight.add(batch);
            if (closing.getAsBoolean()) cancel(batch);
        }
        try {
            String handed = Native.text(slots.get(Native.PTR, 8), slots.get(Native.SIZE, 16));
            byte[] answers = answer(handed, quick).getBytes(StandardCharsets.UTF_8);
            MemorySegment ans;
            try {
                ans = bytes(a, answers);
            } catch (IndexOutOfBoundsException full) { // answers longer than the scratch has left
                ans = bytes(Arena.ofAuto(), answers);
            }
            Native.check((int) Native.host_batch_finish.invokeExact(batch, ans, (long) answers.length, -1, slots,
                    slots.asSlice(8)));
            return Native.text(slots.get(Native.PTR, 0), slots.get(Native.SIZE, 8));
        } finally {
            if (inFlight != null) inFlight.remove(batch);
            Native.host_batch_free.invokeExact(batch);
        }
    }

    private static MemorySegment bytes(SegmentAllocator a, byte[] b) {
        MemorySegment s = a.allocate(b.length + 1L);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        s.set(ValueLayout.JAVA_BYTE, b.length, (byte) 0);
        return s;
    }

    /** capstan_host_batch_cancel: calls not started end cancelled, running ones keep their own result. */
    static void cancel(MemorySegment batch) {
        try {
            HOST_BATCH_CANCEL.invokeExact(batch); // a freed batch: no-op (a checked handle)
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static final java.lang.invoke.MethodHandle HOST_BATCH_CANCEL =
            Native.fn("capstan_host_batch_cancel", null, Native.PTR);

    /** Runs every handed-out call ({@code [{"index","id","name","arguments"}]}); the answers array. */
    static String answer(String handed, Map<String, ToolEntry> quick) {
        if (handed.equals("[]")) return "[]";
        StringBuilder out = new StringBuilder(64).append('[');
        for (JsonNode c : Json.read(handed)) {
            if (out.length() > 1) out.append(',');
            out.append("{\"index\":").append(c.get("index").asLong()).append(',');
            String id = c.get("id").asText();
            String name = c.get("name").asText();
            ToolEntry e = quick.get(name);
            if (e == null) {
                error(out, "tool \"" + name + "\" is quick but has no handler in this Java registry");
                continue;
            }
            int mark = out.length();
            try {
                Object v = e.handler.call(new ToolCall(id, name, c.get("arguments")));
                if (v instanceof CompletionStage<?> stage) v = stage.toCompletableFuture().join();
                put(out, v);
            } catch (Throwable t) {
                out.setLength(mark);
                error(out, ToolEntry.describe(t));
            }
        }
        return out.append(']').toString();
    }

    private static void error(StringBuilder out, String message) {
        quote(out.append("\"error\":"), message).append('}');
    }

    /** The answer for a handler's return value: text, content parts, or JSON. */
    private static void put(StringBuilder out, Object v) {
        String parts = ToolEntry.partsOf(v);
        if (parts != null) {
            out.append("\"parts\":").append(parts);
        } else if (v instanceof CharSequence cs) {
            quote(out.append("\"text\":"), cs);
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
                || v instanceof Boolean) {
            out.append("\"json\":").append(v); // what Jackson writes for these
        } else {
            out.append("\"json\":").append(Json.write(v));
        }
        out.append('}');
    }

    /** {@code s} as a JSON string. */
    static StringBuilder quote(StringBuilder out, CharSequence s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (ch < 0x20) out.append(String.format("\\u%04x", (int) ch));
                    else out.append(ch);
                }
            }
        }
        return out.append('"');
    }
}
