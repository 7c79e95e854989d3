package dev.capstan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * capstan's own threads, process-wide ({@code capstan_runtime_configure} and {@code _shutdown}): the pool
 * that runs tools and result callbacks. Not to be confused with {@link java.lang.Runtime}.
 */
public final class CapstanRuntime {
    private CapstanRuntime() {}

    /**
     * Sets the cap on pool threads (0: 256) and how long an idle one waits for work before it ends, in
     * milliseconds (0: 10,000), at any time. The cap is hard: at most {@code threads} pool threads exist at
     * once (threads calling {@code execute} or {@code pump} also run calls, on top).
     */
    public static void configure(int threads, int keepAliveMs) {
        if (threads < 0 || keepAliveMs < 0) {
            throw new IllegalArgumentException("threads and keepAliveMs must be >= 0 (0: capstan's default)");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment o = Native.initStruct(a, Native.RUNTIME_OPTIONS);
            o.set(Native.U32, Native.off(Native.RUNTIME_OPTIONS, "threads"), threads);
            o.set(Native.U32, Native.off(Native.RUNTIME_OPTIONS, "keep_alive_ms"), keepAliveMs);
            Native.check((int) Native.runtime_configure.invokeExact(o));
        } catch (CapstanException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Restores the defaults (256 pool threads, 10 s keep-alive). */
    public static void configureDefaults() {
        configure(0, 0);
    }

    /**
     * Stops and joins every thread capstan started (pool threads finish the work queued first; the timer
     * thread; MCP connection threads), waiting up to {@code timeoutMs} for what still runs; cancels nothing.
     * Returns true when no capstan thread is left, false on timeout (what still runs goes on; {@link
     * CapstanException} is not thrown for that). capstan keeps working afterwards: the next call starts the
     * threads it needs again. Call it from a host thread, never from inside a tool or callback.
     *
     * @throws IllegalStateException when called from inside a capstan callback (it would wait for itself)
     */
    public static boolean shutdown(int timeoutMs) {
        if (Native.inCallback()) {
            throw new IllegalStateException("CapstanRuntime.shutdown() from inside a capstan callback would wait"
                    + " for itself: call it from a host thread");
        }
        try {
            int st = (int) Native.runtime_shutdown.invokeExact(timeoutMs);
            if (st == 13) return false; // CAPSTAN_ERR_TIMEOUT
            Native.check(st);
            return true;
        } catch (CapstanException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
