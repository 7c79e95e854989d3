package dev.capstan;

/**
 * A call starting or ending, as the registry's event hook sees it ({@link Registry#setEventHook}).
 *
 * @param kind what happened
 * @param tool the tool's name
 * @param id the call's id
 * @param index position of the call in its batch
 * @param outcome for FINISHED: how the call ended; otherwise OK
 * @param durationUs for FINISHED and TIMED_OUT: microseconds since the tool started
 */
public record ToolEvent(Kind kind, String tool, String id, int index, Outcome outcome, long durationUs) {
    /** {@code CAPSTAN_EVENT_*}. */
    public enum Kind {
        STARTED, FINISHED, TIMED_OUT, CANCELLED;

        static Kind of(int code) {
            Kind[] v = values();
            return code >= 0 && code < v.length ? v[code] : FINISHED;
        }
    }
}
