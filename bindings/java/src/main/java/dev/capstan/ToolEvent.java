package dev.capstan;

/**
 * A call starting, ending, reporting progress or sending a log message, as the registry's event hook sees it
 * ({@link Registry#setEventHook}).
 *
 * @param kind what happened
 * @param tool the tool's name
 * @param id the call's id
 * @param index position of the call in its batch
 * @param outcome for FINISHED: how the call ended; otherwise OK
 * @param durationUs for FINISHED and TIMED_OUT: microseconds since the tool started; for PROGRESS and LOG: the
 *     same, up to the report
 * @param progress for PROGRESS: the value reported ({@link ToolCall#progress}), growing with every report;
 *     otherwise 0
 * @param total for PROGRESS: the total, 0 when unknown; otherwise 0
 * @param message for PROGRESS: the message, null when none; for LOG: the log message; otherwise null
 * @param level for LOG: the message's level ({@link ToolCall#log}); otherwise null
 */
public record ToolEvent(Kind kind, String tool, String id, int index, Outcome outcome, long durationUs,
        double progress, double total, String message, LogLevel level) {

    /** An event without a log level (the record's shape before LOG existed). */
    public ToolEvent(Kind kind, String tool, String id, int index, Outcome outcome, long durationUs,
            double progress, double total, String message) {
        this(kind, tool, id, index, outcome, durationUs, progress, total, message, null);
    }

    /** An event without progress (the record's shape before PROGRESS existed). */
    public ToolEvent(Kind kind, String tool, String id, int index, Outcome outcome, long durationUs) {
        this(kind, tool, id, index, outcome, durationUs, 0, 0, null, null);
    }

    /** {@code CAPSTAN_EVENT_*}. */
    public enum Kind {
        STARTED, FINISHED, TIMED_OUT, CANCELLED, PROGRESS, LOG,
        /** The call was answered from the registry's journal without running its tool; FINISHED follows. */
        REPLAYED;

        /** null for a kind this binding does not know (a newer library): the hook does not see it. */
        static Kind of(int code) {
            Kind[] v = values();
            return code >= 0 && code < v.length ? v[code] : null;
        }
    }
}
