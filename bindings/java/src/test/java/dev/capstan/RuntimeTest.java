package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** capstan's pool, process-wide: the thread cap and shutdown. */
class RuntimeTest {
    @Test
    void theThreadCapBoundsHowManyToolsRunAtOnceOnThePool() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CapstanRuntime.configure(1, 0);
        try (Registry r = new Registry()) {
            r.tool("slow", "", null, call -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    Thread.sleep(20);
                } finally {
                    running.decrementAndGet();
                }
                return "ok";
            });
            List<Call> calls = new ArrayList<>();
            for (int i = 0; i < 4; i++) calls.add(Call.of("c" + i, "slow", Map.of()));
            // results().get() only waits (Batch.await with no limit would run calls on this thread)
            try (Batch b = r.submit(calls, ExecOptions.DEFAULTS, null)) {
                List<ToolResult> out = b.results().get(30, TimeUnit.SECONDS);
                assertTrue(out.stream().allMatch(x -> x.outcome() == Outcome.OK), out.toString());
            }
            assertEquals(1, most.get());
        } finally {
            CapstanRuntime.configureDefaults();
        }
    }

    @Test
    void shutdownJoinsThePoolAndCapstanGoesOnAfterIt() throws Exception {
        try (Registry r = RegistryTest.adder()) {
            r.submit(List.of(Call.of("1", "add", Map.of("a", 1)))).results().join();
            // a tool still running on a pool thread: shutdown cannot finish in 50 ms
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            r.tool("held", "", null, call -> {
                started.countDown();
                release.await();
                return "released";
            });
            try (Batch held = r.submit(List.of(Call.of("h", "held", Map.of())))) {
                assertTrue(started.await(30, TimeUnit.SECONDS));
                assertEquals(false, CapstanRuntime.shutdown(50));
                release.countDown();
                assertEquals("released", held.results().join().get(0).content());
            }
            assertTrue(CapstanRuntime.shutdown(30_000), "a capstan thread was left running");
            // the next call starts the threads it needs again
            assertEquals("{\"sum\":3}", r.submit(List.of(Call.of("2", "add", Map.of("a", 2)))).results().join().get(0)
                    .content());
        }
    }

    @Test
    void shutdownFromInsideAToolIsRefused() {
        try (Registry r = new Registry()) {
            r.tool("stop", "", null, call -> CapstanRuntime.shutdown(0));
            ToolResult out = r.execute(List.of(Call.of("1", "stop", Map.of()))).get(0);
            assertEquals(Outcome.TOOL_ERROR, out.outcome());
            assertTrue(out.content().contains("host thread"), out.content());
        }
        assertThrows(IllegalArgumentException.class, () -> CapstanRuntime.configure(-1, 0));
    }
}
