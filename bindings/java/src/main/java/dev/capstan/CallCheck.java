package dev.capstan;

/**
 * What {@link Registry#checkCall} found, without running anything.
 *
 * @param outcome {@link Outcome#OK}, {@link Outcome#INVALID_ARGUMENTS}, {@link Outcome#UNKNOWN_TOOL} or
 *     {@link Outcome#CANCELLED} (the registry is closing)
 * @param text on OK the validated arguments (compact JSON, schema defaults filled in, coerced where the
 *     registry coerces); otherwise the result text a batch would give the call, word for word
 */
public record CallCheck(Outcome outcome, String text) {
    /** Whether the call would reach its tool. */
    public boolean ok() {
        return outcome == Outcome.OK;
    }
}
