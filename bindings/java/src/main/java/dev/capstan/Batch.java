package dev.capstan;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Calls running in the background ({@link Registry#submit}). Each result goes to the listener as its call
 * finishes (on the thread that finished it), and {@link #results()} completes with all of them, in call
 * order, once the last arrived. {@link #close()} frees the batch (a batch still running finishes
 * internally; its future then completes exceptionally with a CancellationException if it had not).
 */
public final class Batch implements AutoCloseable {
    private final CompletableFuture<List<ToolResult>> results = new CompletableFuture<>();
    private final List<ToolResult> got = new ArrayList<>();
    private final Consumer<ToolResult> listener;
    private MemorySegment handle = MemorySegment.NULL;
    MemorySegment userData;

    Batch(Consumer<ToolResult> listener) {
        this.listener = listener;
    }

    void bind(MemorySegment handle) {
        this.handle = handle;
    }

    void deliver(ToolResult r) {
        if (r == null) {
            List<ToolResult> all;
            synchronized (got) {
                all = new ArrayList<>(got);
            }
            all.sort(Comparator.comparingInt(ToolResult::index));
            Native.drop(userData);
            results.complete(List.copyOf(all));
            return;
        }
        synchronized (got) {
            got.add(r);
        }
        if (listener != null) {
            try {
                listener.accept(r);
            } catch (Throwable ignored) {
                // a listener's exception must not reach capstan's thread
            }
        }
    }

    /** Completes with every result, in call order. */
    public CompletableFuture<List<ToolResult>> results() {
        return results;
    }

    /** Calls not started never start (they end CANCELLED); running calls see {@link ToolCall#cancelled()}. */
    public synchronized void cancel() {
        if (handle.address() == 0) return;
        try {
            Native.batch_cancel.invokeExact(handle);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Waits up to {@code timeoutMs} for every result (this thread may run calls not yet started). */
    public boolean await(int timeoutMs) {
        MemorySegment h;
        synchronized (this) {
            h = handle;
        }
        if (h.address() == 0) return results.isDone();
        try {
            int st = (int) Native.batch_wait.invokeExact(h, timeoutMs);
            if (st == 13) return false; // CAPSTAN_ERR_TIMEOUT
            Native.check(st);
            return true;
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public synchronized void close() {
        if (handle.address() == 0) return;
        try {
            Native.batch_free.invokeExact(handle);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            handle = MemorySegment.NULL;
            if (!results.isDone()) {
                Native.drop(userData);
                results.completeExceptionally(new CancellationException("batch freed before its last result"));
            }
        }
    }
}
