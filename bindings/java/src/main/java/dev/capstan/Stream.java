package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A streamed model response read as it arrives ({@code capstan_stream}): {@link #feed} the body's bytes
 * (server-sent events, split anywhere), text deltas go to the text listener on the feeding thread, and
 * with early dispatch each call starts as soon as its arguments are complete. {@link #finish()} waits for
 * every result. One thread at a time feeds or finishes; {@link #cancel()} may come from any thread.
 */
public final class Stream implements AutoCloseable {
    /**
     * What {@link #finish()} returns.
     *
     * @param calls the response's calls, normalized
     * @param results one result per call, in call order
     * @param messagesJson the results as the provider's next request takes them
     * @param text the response's text
     * @param stopReason the provider's stop or finish reason, or null
     * @param cancelled whether the stream was cancelled
     * @param cutCalls positions of calls the response cut (never run)
     * @param json the whole object capstan wrote
     */
    public record Outcome(List<Call> calls, List<ToolResult> results, String messagesJson, String text,
            String stopReason, boolean cancelled, List<Integer> cutCalls, String json) {}

    /** What capstan's sink callbacks reach (by user_data): the listeners, never the Stream itself. */
    static final class Sink {
        private final Consumer<String> onText;
        private final Consumer<ToolResult> onResult;

        Sink(Consumer<String> onText, Consumer<ToolResult> onResult) {
            this.onText = onText;
            this.onResult = onResult;
        }

        void text(String t) {
            if (onText == null) return;
            try {
                onText.accept(t);
            } catch (Throwable ignored) {
                // a listener's exception must not reach capstan
            }
        }

        void result(ToolResult r) {
            if (onResult == null) return;
            try {
                onResult.accept(r);
            } catch (Throwable ignored) {
                // a listener's exception must not reach capstan
            }
        }
    }

    /** The native stream, freed once: by close() or by the Cleaner (it must not reference the Stream). */
    static final class Handle implements Runnable {
        private final MemorySegment userData;
        private MemorySegment ptr;
        private boolean closedByUser;

        Handle(MemorySegment userData, MemorySegment ptr) {
            this.userData = userData;
            this.ptr = ptr;
        }

        synchronized boolean isFreed() {
            return ptr == null;
        }

        @Override
        public void run() {
            MemorySegment p;
            boolean cleaner;
            synchronized (this) {
                p = ptr;
                ptr = null;
                cleaner = !closedByUser;
            }
            if (p == null) return;
            try {
                Native.stream_free.invokeExact(p); // no sink callback runs after this returns
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            } finally {
                Native.drop(userData);
            }
            if (cleaner) Native.CLEANED.incrementAndGet();
        }
    }

    private final Sink sink;
    private final MemorySegment userData;
    private MemorySegment handle;
    private Handle owner;
    private java.lang.ref.Cleaner.Cleanable cleanable;

    Stream(Consumer<String> onText, Consumer<ToolResult> onResult) {
        this.sink = new Sink(onText, onResult);
        this.userData = Native.keep(sink);
    }

    void open(MemorySegment reg, Format fmt, ExecOptions options, boolean earlyDispatch) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment opts = options.toNative(a);
            if (earlyDispatch) {
                long off = Native.off(Native.EXEC_OPTIONS, "flags");
                opts.set(Native.U32, off, opts.get(Native.U32, off) | 16);
            }
            MemorySegment sinkStruct = Native.initStruct(a, Native.STREAM_SINK);
            sinkStruct.set(Native.PTR, Native.off(Native.STREAM_SINK, "on_text"), Native.TEXT_STUB);
            sinkStruct.set(Native.PTR, Native.off(Native.STREAM_SINK, "on_result"), Native.RESULT_STUB);
            sinkStruct.set(Native.PTR, Native.off(Native.STREAM_SINK, "user_data"), userData);
            MemorySegment out = a.allocate(Native.PTR);
            int st = (int) Native.stream_new.invokeExact(reg, fmt.code, opts, sinkStruct, out);
            if (st != Native.OK) {
                CapstanException e = Native.lastError(st);
                Native.drop(userData);
                throw e;
            }
            handle = out.get(Native.PTR, 0);
            owner = new Handle(userData, handle);
            cleanable = Native.CLEANER.register(this, owner);
        }
    }

    private MemorySegment live() {
        if (handle == null) throw new IllegalStateException("stream is closed");
        return handle;
    }

    /** Reads the next bytes of the body. @throws CapstanException PROVIDER_ERROR, INVALID_RESPONSE... (sticky) */
    public synchronized void feed(byte[] bytes, int off, int len) {
        MemorySegment h = live();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment b = a.allocate(Math.max(1, len));
            MemorySegment.copy(bytes, off, b, ValueLayout.JAVA_BYTE, 0, len);
            Native.check((int) Native.stream_feed.invokeExact(h, b, (long) len));
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(this);
        }
    }

    public void feed(byte[] bytes) {
        feed(bytes, 0, bytes.length);
    }

    /** Feeds everything {@code in} holds (e.g. an HTTP response body), in chunks as they arrive. */
    public void feedAll(InputStream in) throws IOException {
        byte[] buf = new byte[16 * 1024];
        for (int n; (n = in.read(buf)) >= 0;) {
            if (n > 0) feed(buf, 0, n);
        }
    }

    /**
     * The body ended: starts the calls not started, waits for every result.
     *
     * @throws CapstanException STREAM_TRUNCATED (the body ended early: nothing was run that had not
     *     started), or the feed's sticky error
     */
    public synchronized Outcome finish() {
        MemorySegment h = live();
        String json;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.stream_finish.invokeExact(h, out, len));
            json = Native.takeString(out, len);
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(this);
        }
        JsonNode n = Json.read(json);
        List<ToolResult> results = ToolResult.listOf(n.path("results").toString());
        List<Integer> cut = new ArrayList<>();
        n.path("cut_calls").forEach(c -> cut.add(c.asInt()));
        return new Outcome(Call.listOf(n.path("calls").toString()), results, n.path("messages").toString(),
                n.path("text").asText(""), n.path("stop_reason").isNull() ? null : n.path("stop_reason").asText(),
                n.path("cancelled").asBoolean(), List.copyOf(cut), json);
    }

    Handle handleForTests() {
        return owner;
    }

    MemorySegment userDataForTests() {
        return userData;
    }

    /** No call starts any more; running calls see {@link ToolCall#cancelled()}. Any thread. */
    public void cancel() {
        Handle o = owner;
        if (o == null) return;
        try {
            synchronized (o) {
                if (o.ptr == null) return;
                Native.stream_cancel.invokeExact(o.ptr);
            }
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(this);
        }
    }

    /**
     * Frees the stream (calls still running finish internally; no listener runs after this returns). A
     * stream that is never closed is freed once it is no longer reachable (a {@link java.lang.ref.Cleaner}).
     */
    @Override
    public synchronized void close() {
        if (handle == null) return;
        synchronized (owner) {
            owner.closedByUser = true;
        }
        handle = null;
        cleanable.clean();
    }
}
