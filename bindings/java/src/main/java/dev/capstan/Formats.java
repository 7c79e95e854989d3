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
            if (r.partsJson() != null) m.put("parts", Json.read(r.partsJson()));
            if (r.structuredContentJson() != null) m.put("structured_content", Json.read(r.structuredContentJson()));
            out.add(m);
        }
        return formatResults(fmt, Json.write(out));
    }

    /**
     * Checks a conversation the host assembled against the rules format {@code fmt} (OPENAI_CHAT,
     * OPENAI_RESPONSES, ANTHROPIC or GEMINI) sets for tool calls and their results: calls without results,
     * orphan and second results, repeated or illegal ids, results out of order and, with
     * {@code geminiSignatures} (Gemini 3), missing thought signatures. With {@code repair} it also returns a
     * history the provider will take, each repair listed in the findings. Pure: any thread, no registry.
     *
     * @param historyJson an array of messages, input items or contents, or a request body holding one under
     *     {@code "messages"}, {@code "input"} or {@code "contents"}
     * @throws CapstanException INVALID_ARGUMENT for DESCRIBE or MCP (no conversations), text that is not JSON
     *     or a history of the wrong shape (the message names the entry)
     */
    public static HistoryCheck checkHistory(Format fmt, String historyJson, boolean repair, boolean geminiSignatures) {
        int flags = (repair ? 1 : 0) | (geminiSignatures ? 2 : 0);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = Native.utf8(a, historyJson);
            MemorySegment rep = a.allocate(Native.PTR);
            MemorySegment repLen = a.allocate(Native.SIZE);
            MemorySegment fixed = a.allocate(Native.PTR);
            MemorySegment fixedLen = a.allocate(Native.SIZE);
            MemorySegment fixedOut = repair ? fixed : MemorySegment.NULL;
            MemorySegment fixedLenOut = repair ? fixedLen : MemorySegment.NULL;
            Native.check((int) Native.format_check_history.invokeExact(fmt.code, s, Native.utf8Len(s), flags, rep,
                    repLen, fixedOut, fixedLenOut));
            String report = Native.takeString(rep, repLen);
            String repaired = repair ? Native.takeString(fixed, fixedLen) : null;
            com.fasterxml.jackson.databind.JsonNode n = Json.read(report);
            List<com.fasterxml.jackson.databind.JsonNode> findings = new ArrayList<>();
            n.path("findings").forEach(findings::add);
            return new HistoryCheck(n.path("ok").asBoolean(), List.copyOf(findings), repaired, report);
        } catch (CapstanException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@link #checkHistory(Format, String, boolean, boolean)} without Gemini's signature check. */
    public static HistoryCheck checkHistory(Format fmt, String historyJson, boolean repair) {
        return checkHistory(fmt, historyJson, repair, false);
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
