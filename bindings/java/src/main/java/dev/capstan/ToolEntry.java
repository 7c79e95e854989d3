package dev.capstan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/** A registered tool's handler, named by the user_data capstan passes to {@link Native#onTool}. */
final class ToolEntry {
    final ToolHandler handler;

    ToolEntry(ToolHandler handler) {
        this.handler = handler;
    }

    void run(MemorySegment call) throws Throwable {
        Object out;
        try {
            String args;
            String id;
            String tool;
            try (Arena a = Arena.ofConfined()) {
                MemorySegment len = a.allocate(Native.SIZE);
                args = Native.text((MemorySegment) Native.call_arguments.invokeExact(call, len), len.get(Native.SIZE, 0));
                id = Native.text((MemorySegment) Native.call_id.invokeExact(call, len), len.get(Native.SIZE, 0));
                tool = Native.text((MemorySegment) Native.call_tool.invokeExact(call, len), len.get(Native.SIZE, 0));
            }
            out = handler.call(new ToolCall(call, id, tool, args));
        } catch (Throwable e) {
            fail(call, e);
            return;
        }
        if (out instanceof CompletionStage<?> stage) {
            stage.whenComplete((v, e) -> {
                try {
                    if (e != null) fail(call, e);
                    else complete(call, v);
                } catch (Throwable t) {
                    // completing refused (timed out, cancelled): capstan already gave the call its result
                }
            });
        } else {
            complete(call, out);
        }
    }

    static void complete(MemorySegment call, Object value) throws Throwable {
        int kind;
        String text;
        String parts;
        try {
            parts = partsOf(value);
        } catch (RuntimeException e) {
            Native.fail(call, "the tool's content parts could not be written as JSON: " + e.getMessage());
            return;
        }
        if (parts != null) {
            kind = Native.CONTENT_PARTS;
            text = parts;
        } else if (value instanceof CharSequence cs) {
            kind = Native.CONTENT_TEXT;
            text = cs.toString();
        } else {
            kind = Native.CONTENT_JSON;
            try {
                text = Json.write(value);
            } catch (RuntimeException e) {
                Native.fail(call, "the tool's result could not be written as JSON: " + e.getMessage());
                return;
            }
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = Native.utf8(a, text);
            int st = (int) Native.call_return.invokeExact(call, kind, s, Native.utf8Len(s));
        }
    }

    /** Ends the call for the tool's exception: asking for input (InputRequiredException), else a tool error. */
    static void fail(MemorySegment call, Throwable e) throws Throwable {
        e = unwrap(e);
        if (e instanceof InputRequiredException asked) {
            String refused = ask(call, asked);
            if (refused == null) return;
            Native.fail(call, describe(e) + ": " + refused);
            return;
        }
        Native.fail(call, describe(e));
    }

    /** Completes the call asking its caller for input; null when done, else why capstan refused (call still open). */
    static String ask(MemorySegment call, InputRequiredException asked) throws Throwable {
        String requests;
        try {
            requests = Json.write(asked.requests());
        } catch (RuntimeException e) {
            return "the input requests are not JSON: " + e.getMessage();
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment r = Native.utf8(a, requests);
            MemorySegment s = asked.state() == null ? MemorySegment.NULL : Native.utf8(a, asked.state());
            long sLen = asked.state() == null ? 0 : Native.utf8Len(s);
            int st = (int) Native.call_require_input.invokeExact(call, r, Native.utf8Len(r), s, sLen);
            // ALREADY_COMPLETED / STALE_HANDLE: nothing waits for the call any more
            if (st == Native.OK || st == Native.ERR_ALREADY_COMPLETED || st == Native.ERR_STALE_HANDLE) return null;
            return Native.lastError(st).getMessage();
        }
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException
                || e instanceof java.lang.reflect.InvocationTargetException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    static String describe(Throwable e) {
        e = unwrap(e);
        String m = e.getMessage();
        return m == null || m.isEmpty() ? e.getClass().getSimpleName() : m;
    }

    /** The parts JSON of a tool's return value, or null when it holds no image or file. */
    static String partsOf(Object value) {
        if (value instanceof Content c) return Json.write(List.of(c.part()));
        if (!(value instanceof List<?> list) || list.stream().noneMatch(Content.class::isInstance)) return null;
        List<Map<String, Object>> out = new ArrayList<>(list.size());
        for (Object v : list) {
            if (v instanceof Content c) {
                out.add(c.part());
            } else {
                Map<String, Object> t = new LinkedHashMap<>();
                t.put("type", "text");
                t.put("text", v instanceof CharSequence cs ? cs.toString() : Json.write(v));
                out.add(t);
            }
        }
        return Json.write(out);
    }
}
