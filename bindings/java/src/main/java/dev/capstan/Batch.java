package dev.capstan;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
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
 *
 * <p>A batch that is never closed is freed once it has finished and is no longer reachable (a
 * {@link Cleaner}): {@code reg.submit(calls).results().join()} leaks nothing. A running batch stays
 * reachable (capstan holds it until its last result), so it is never freed under its calls. Closing
 * explicitly (try-with-resources) frees it at once.
 */
public final class Batch implements AutoCloseable {
    private final CompletableFuture<List<ToolResult>> results = new CompletableFuture<>();
    private final List<ToolResult> got = new ArrayList<>();
    private final Consumer<ToolResult> listener;
    private final Handle handle = new Handle();
    private Cleaner.Cleanable cleanable;
    MemorySegment userData;

    /** The native batch, freed once: by close() or by the Cleaner (it must not reference the Batch). */
    static final class Handle implements Runnable {
        private MemorySegment ptr = MemorySegment.NULL;
        private boolean closedByUser;

        synchronized MemorySegment get() {
            return ptr;
        }

        @Override
        public void run() {
            MemorySegment p;
            boolean cleaner;
            synchronized (this) {
                p = ptr;
                ptr = MemorySegment.NULL;
                cleaner = !closedByUser;
            }
            if (p.address() == 0) return;
            try {
                Native.batch_free.invokeExact(p);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (cleaner) Native.CLEANED.incrementAndGet();
        }
    }

    Batch(Consumer<ToolResult> listener) {
        this.listener = listener;
    }

    void bind(MemorySegment ptr) {
        synchronized (handle) {
            handle.ptr = ptr;
        }
        cleanable = Native.CLEANER.register(this, handle);
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

    Handle handleForTests() {
        return handle;
    }

    /** Completes with every result, in call order. */
    public CompletableFuture<List<ToolResult>> results() {
        return results;
    }

    /** Calls not started never start (they end CANCELLED); running calls see {@link ToolCall#cancelled()}. */
    public void cancel() {
        try {
            synchronized (handle) {
                if (handle.ptr.address() == 0) return;
                Native.batch_cancel.invokeExact(handle.ptr);
            }
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Waits up to {@code timeoutMs} for every result (this thread may run calls not yet started). */
    public boolean await(int timeoutMs) {
        try {
            MemorySegment h = handle.get();
            if (h.address() == 0) return results.isDone();
            int st = (int) Native.batch_wait.invokeExact(h, timeoutMs);
            if (st == 13) return false; // CAPSTAN_ERR_TIMEOUT
            Native.check(st);
            return true;
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public void close() {
        synchronized (handle) {
            if (handle.ptr.address() == 0) return;
            handle.closedByUser = true;
        }
        try {
            if (cleanable != null) cleanable.clean();
            else handle.run();
        } finally {
            if (!results.isDone()) {
                Native.drop(userData);
                results.completeExceptionally(new CancellationException("batch freed before its last result"));
            }
        }
    }
}
