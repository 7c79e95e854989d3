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

    private final Consumer<String> onText;
    private final Consumer<ToolResult> onResult;
    private final MemorySegment userData;
    private MemorySegment handle;

    Stream(Consumer<String> onText, Consumer<ToolResult> onResult) {
        this.onText = onText;
        this.onResult = onResult;
        this.userData = Native.keep(this);
    }

    void open(MemorySegment reg, Format fmt, ExecOptions options, boolean earlyDispatch) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment opts = options.toNative(a);
            if (earlyDispatch) {
                long off = Native.off(Native.EXEC_OPTIONS, "flags");
                opts.set(Native.U32, off, opts.get(Native.U32, off) | 16);
            }
            MemorySegment sink = Native.initStruct(a, Native.STREAM_SINK, Native.stream_sink_init, "capstan_stream_sink");
            sink.set(Native.PTR, Native.off(Native.STREAM_SINK, "on_text"), Native.TEXT_STUB);
            sink.set(Native.PTR, Native.off(Native.STREAM_SINK, "on_result"), Native.RESULT_STUB);
            sink.set(Native.PTR, Native.off(Native.STREAM_SINK, "user_data"), userData);
            MemorySegment out = a.allocate(Native.PTR);
            int st = (int) Native.stream_new.invokeExact(reg, fmt.code, opts, sink, out);
            if (st != Native.OK) {
                CapstanException e = Native.lastError(st);
                Native.drop(userData);
                throw e;
            }
            handle = out.get(Native.PTR, 0);
        }
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
        }
        JsonNode n = Json.read(json);
        List<ToolResult> results = ToolResult.listOf(n.path("results").toString());
        List<Integer> cut = new ArrayList<>();
        n.path("cut_calls").forEach(c -> cut.add(c.asInt()));
        return new Outcome(Call.listOf(n.path("calls").toString()), results, n.path("messages").toString(),
                n.path("text").asText(""), n.path("stop_reason").isNull() ? null : n.path("stop_reason").asText(),
                n.path("cancelled").asBoolean(), List.copyOf(cut), json);
    }

    /** No call starts any more; running calls see {@link ToolCall#cancelled()}. Any thread. */
    public void cancel() {
        MemorySegment h = handle;
        if (h == null) return;
        try {
            Native.stream_cancel.invokeExact(h);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public synchronized void close() {
        if (handle == null) return;
        try {
            Native.stream_free.invokeExact(handle);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            handle = null;
            Native.drop(userData);
        }
    }
}
