package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Batches and streams the user forgot to close are freed once unreachable. */
class CleanerTest {
    /** Collects garbage until {@code done} holds (bounded: 300 rounds). */
    static boolean collectUntil(BooleanSupplier done) throws InterruptedException {
        for (int i = 0; i < 300 && !done.getAsBoolean(); i++) {
            System.gc();
            Thread.sleep(10);
        }
        return done.getAsBoolean();
    }

    static Batch.Handle forgottenBatch(Registry r) {
        Batch b = r.submit(List.of(Call.of("1", "add", Map.of("a", 1))));
        assertEquals(Outcome.OK, b.results().join().get(0).outcome());
        assertTrue(b.handleForTests().get().address() != 0);
        return b.handleForTests(); // the Batch itself becomes unreachable here
    }

    @Test
    void aFinishedBatchNobodyClosedIsFreed() throws Exception {
        try (Registry r = RegistryTest.adder()) {
            Batch.Handle h = forgottenBatch(r);
            assertTrue(collectUntil(() -> h.get().address() == 0), "the Cleaner never freed the batch");
        }
    }

    static Stream.Handle forgottenStream(Registry r, MemorySegment[] sinkKey) {
        Stream s = r.stream(Format.OPENAI_CHAT);
        s.feed("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n".getBytes());
        sinkKey[0] = s.userDataForTests();
        assertNotNull(Native.get(sinkKey[0]));
        return s.handleForTests();
    }

    @Test
    void aStreamNobodyClosedIsFreedAndItsSinkDropped() throws Exception {
        try (Registry r = RegistryTest.adder()) {
            MemorySegment[] key = new MemorySegment[1];
            Stream.Handle h = forgottenStream(r, key);
            assertTrue(collectUntil(() -> h.isFreed()), "the Cleaner never freed the stream");
            assertNull(Native.get(key[0]), "the stream's sink is still in the handle table");
        }
    }

    @Test
    void aClosedBatchIsFreedAtOnceAndOnlyOnce() {
        try (Registry r = RegistryTest.adder()) {
            Batch b = r.submit(List.of(Call.of("1", "add", Map.of("a", 1))));
            b.results().join();
            b.close();
            assertEquals(0, b.handleForTests().get().address());
            b.close(); // a second close does nothing
            b.handleForTests().run(); // nor does the Cleaner's action after it (no double free)
            assertEquals(0, b.handleForTests().get().address());
        }
    }
}
