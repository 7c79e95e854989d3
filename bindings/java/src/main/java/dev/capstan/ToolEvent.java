package dev.capstan;

/**
 * A call starting, ending or reporting progress, as the registry's event hook sees it
 * ({@link Registry#setEventHook}).
 *
 * @param kind what happened
 * @param tool the tool's name
 * @param id the call's id
 * @param index position of the call in its batch
 * @param outcome for FINISHED: how the call ended; otherwise OK
 * @param durationUs for FINISHED and TIMED_OUT: microseconds since the tool started; for PROGRESS: the same,
 *     up to the report
 * @param progress for PROGRESS: the value reported ({@link ToolCall#progress}), growing with every report;
 *     otherwise 0
 * @param total for PROGRESS: the total, 0 when unknown; otherwise 0
 * @param message for PROGRESS: the message, null when none; otherwise null
 */
public record ToolEvent(Kind kind, String tool, String id, int index, Outcome outcome, long durationUs,
        double progress, double total, String message) {

    /** An event without progress (the record's shape before PROGRESS existed). */
    public ToolEvent(Kind kind, String tool, String id, int index, Outcome outcome, long durationUs) {
        this(kind, tool, id, index, outcome, durationUs, 0, 0, null);
    }

    /** {@code CAPSTAN_EVENT_*}. */
    public enum Kind {
        STARTED, FINISHED, TIMED_OUT, CANCELLED, PROGRESS;

        /** null for a kind this binding does not know (a newer library): the hook does not see it. */
        static Kind of(int code) {
            Kind[] v = values();
            return code >= 0 && code < v.length ? v[code] : null;
        }
    }
}
