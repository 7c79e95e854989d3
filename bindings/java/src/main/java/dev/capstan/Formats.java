package dev.capstan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Provider formats without a registry: calls out of a model's response, results into the next messages. */
public final class Formats {
    private Formats() {}

    /**
     * The tool calls in a model response of format {@code fmt} (the whole body, or the message/content),
     * as normalized calls JSON.
     *
     * @throws CapstanException PROVIDER_ERROR when the body is the provider's error report (see
     *     {@link CapstanException#provider()}), INVALID_RESPONSE when it is not one of the format's shapes
     */
    public static String parseCallsJson(Format fmt, String responseJson) {
        return call2(Native.format_parse_calls, fmt, responseJson);
    }

    /** {@link #parseCallsJson} read into {@link Call}s. */
    public static List<Call> parseCalls(Format fmt, String responseJson) {
        return Call.listOf(parseCallsJson(fmt, responseJson));
    }

    /** Normalized results JSON (as {@link Registry#executeJson} returns it) as what format {@code fmt} takes next. */
    public static String formatResults(Format fmt, String resultsJson) {
        return call2(Native.format_write_results, fmt, resultsJson);
    }

    /** {@link #formatResults(Format, String)} for results as {@link Registry#execute} returns them. */
    public static String formatResults(Format fmt, List<ToolResult> results) {
        List<Map<String, Object>> out = new ArrayList<>(results.size());
        for (ToolResult r : results) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", r.id());
            m.put("name", r.name());
            m.put("content", r.content());
            m.put("is_error", r.isError());
            m.put("outcome", r.outcome().wireName());
            m.put("duration_us", r.durationUs());
            out.add(m);
        }
        return formatResults(fmt, Json.write(out));
    }

    private static String call2(java.lang.invoke.MethodHandle h, Format fmt, String in) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = Native.utf8(a, in);
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            int st = (int) h.invokeExact(fmt.code, s, Native.utf8Len(s), out, len);
            Native.check(st);
            return Native.takeString(out, len);
        } catch (CapstanException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
