package dev.capstan;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongConsumer;

/**
 * The host batches running on a registry now, which {@link Registry#close()} cancels: a slot each, claimed and
 * given back with one atomic operation and no allocation (a set holds any past the slots). A batch's own
 * quick calls cost it this much, so a set's boxing and hashing per batch was worth saving.
 */
final class InFlight {
    private static final int SLOTS = 16; // a power of two
    private final AtomicLongArray slots = new AtomicLongArray(SLOTS);
    private final Set<Long> more = ConcurrentHashMap.newKeySet();

    /** Registers {@code batch} (not 0); what to give {@link #remove}. */
    int add(long batch) {
        int start = (int) Thread.currentThread().threadId() & (SLOTS - 1);
        for (int k = 0; k < SLOTS; k++) {
            int s = (start + k) & (SLOTS - 1);
            if (slots.get(s) == 0 && slots.compareAndSet(s, 0, batch)) return s;
        }
        more.add(batch);
        return -1;
    }

    void remove(int slot, long batch) {
        if (slot >= 0) slots.set(slot, 0);
        else more.remove(batch);
    }

    /** Every batch registered now (one that ends meanwhile may be given too: cancelling a freed one is a no-op). */
    void forEach(LongConsumer f) {
        for (int s = 0; s < SLOTS; s++) {
            long b = slots.get(s);
            if (b != 0) f.accept(b);
        }
        for (long b : more) f.accept(b);
    }
}
