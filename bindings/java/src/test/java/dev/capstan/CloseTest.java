package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Issue 49: close() cancels calls that wait for someone who never comes, as Go's and Python's close do. */
class CloseTest {
    @Test
    void closeCancelsAMainThreadCallNobodyPumpsAndReturns() throws Exception {
        Registry r = new Registry();
        Semaphore waiting = new Semaphore(0);
        r.tool("ui", "", null, ToolOptions.DEFAULTS.withMainThread(true), c -> "ran");
        r.setNotify(waiting::release);
        CompletableFuture<List<ToolResult>> out =
                CompletableFuture.supplyAsync(() -> r.execute(List.of(Call.of("1", "ui", Map.of()))));
        assertTrue(waiting.tryAcquire(10, TimeUnit.SECONDS), "the call never waited for a pump");
        Thread closer = Thread.ofPlatform().start(r::close);
        closer.join(20_000); // capstan's own bound on a pump wait is 60 s: this is well before it
        assertFalse(closer.isAlive(), "close blocked on a main-thread call nobody pumps");
        ToolResult res = out.get(10, TimeUnit.SECONDS).get(0);
        assertEquals(Outcome.CANCELLED, res.outcome(), res.content());
    }

    @Test
    void closeCancelsAnApprovalNobodyGivesButARunningCallKeepsItsResult() throws Exception {
        Registry r = new Registry();
        CountDownLatch asked = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        r.setApprover(req -> asked.countDown()); // never decides
        r.tool("pay", "", null, ToolOptions.DEFAULTS.withRequiresApproval(true), c -> "paid");
        r.tool("hold", "", null, c -> {
            started.countDown();
            release.await(10, TimeUnit.SECONDS);
            return "held";
        });
        CompletableFuture<List<ToolResult>> out = CompletableFuture.supplyAsync(
                () -> r.execute(List.of(Call.of("1", "pay", Map.of()), Call.of("2", "hold", Map.of()))));
        assertTrue(asked.await(10, TimeUnit.SECONDS) && started.await(10, TimeUnit.SECONDS));
        Thread closer = Thread.ofPlatform().start(r::close);
        closer.join(200);
        assertTrue(closer.isAlive(), "close returned while a call was running");
        release.countDown();
        closer.join(20_000);
        assertFalse(closer.isAlive(), "close blocked on an approval nobody gives");
        List<ToolResult> res = out.get(10, TimeUnit.SECONDS);
        assertEquals(Outcome.CANCELLED, res.get(0).outcome(), res.get(0).content());
        assertEquals("held", res.get(1).content());
        assertEquals(Outcome.OK, res.get(1).outcome());
    }
}
