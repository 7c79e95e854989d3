package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * A batch through capstan's host batches ({@code capstan_host_batch_*}): the calls of quick tools
 * ({@link ToolOptions#quick()}) come out checked in one buffer, run here on the calling thread in call order,
 * and their results go back in one: two downcalls and one Jackson parse and write per batch, no upcall and no
 * arena per call. The batch's other tools run on capstan's pool meanwhile.
 */
final class HostBatch {
    private HostBatch() {}

    /** Runs the batch and returns the results JSON of {@code capstan_registry_execute}. */
    static String execute(MemorySegment reg, Arena a, String callsJson, ExecOptions options,
            Map<String, ToolEntry> quick) throws Throwable {
        return execute(reg, a, callsJson, options, quick, null, null);
    }

    /**
     * As above, with the batch in {@code inFlight} while it runs, so that {@link Registry#close()} can cancel
     * its calls that wait (for a pump, an approver); {@code closing} says whether close began before the batch
     * was added, which then cancels it itself.
     */
    static String execute(MemorySegment reg, Arena a, String callsJson, ExecOptions options,
            Map<String, ToolEntry> quick, java.util.Set<MemorySegment> inFlight,
            java.util.function.BooleanSupplier closing) throws Throwable {
        MemorySegment c = Native.utf8(a, callsJson);
        MemorySegment out = a.allocate(Native.PTR);
        MemorySegment calls = a.allocate(Native.PTR);
        MemorySegment callsLen = a.allocate(Native.SIZE);
        Native.check((int) Native.host_batch_begin.invokeExact(reg, c, Native.utf8Len(c), options.toNative(a), out,
                calls, callsLen));
        MemorySegment batch = out.get(Native.PTR, 0);
        if (inFlight != null) {
            inFlight.add(batch);
            if (closing.getAsBoolean()) cancel(batch);
        }
        try {
            String answers = answer(Native.text(calls.get(Native.PTR, 0), callsLen.get(Native.SIZE, 0)), quick);
            MemorySegment ans = Native.utf8(a, answers);
            MemorySegment res = a.allocate(Native.PTR);
            MemorySegment resLen = a.allocate(Native.SIZE);
            Native.check((int) Native.host_batch_finish.invokeExact(batch, ans, Native.utf8Len(ans), -1, res, resLen));
            return Native.text(res.get(Native.PTR, 0), resLen.get(Native.SIZE, 0));
        } finally {
            if (inFlight != null) inFlight.remove(batch);
            Native.host_batch_free.invokeExact(batch);
        }
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
        ArrayNode out = Json.MAPPER.createArrayNode();
        for (JsonNode c : Json.read(handed)) {
            ObjectNode o = out.addObject();
            o.put("index", c.get("index").asLong());
            String id = c.get("id").asText();
            String name = c.get("name").asText();
            ToolEntry e = quick.get(name);
            if (e == null) {
                o.put("error", "tool \"" + name + "\" is quick but has no handler in this Java registry");
                continue;
            }
            Object v;
            try {
                v = e.handler.call(new ToolCall(id, name, c.get("arguments")));
                if (v instanceof CompletionStage<?> stage) v = stage.toCompletableFuture().join();
                put(o, v);
            } catch (Throwable t) {
                o.remove(java.util.List.of("text", "json", "parts"));
                o.put("error", ToolEntry.describe(t));
            }
        }
        return Json.write(out);
    }

    /** The answer for a handler's return value: text, content parts, or JSON. */
    private static void put(ObjectNode o, Object v) {
        String parts = ToolEntry.partsOf(v);
        if (parts != null) {
            o.set("parts", Json.read(parts));
        } else if (v instanceof CharSequence cs) {
            o.put("text", cs.toString());
        } else {
            o.set("json", Json.MAPPER.valueToTree(v));
        }
    }
}
