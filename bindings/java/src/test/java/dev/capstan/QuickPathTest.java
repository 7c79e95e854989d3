package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The quick path's own reading and writing (issue #46 item 3): the handed-out calls read in place, a method's
 * arguments bound straight from them, the answers and the calls written as UTF-8, the results read in one
 * pass. Each must give what the Jackson trees gave before.
 */
class QuickPathTest {
    /** Every kind of parameter the binding reads in place, and some it leaves to Jackson. */
    public static final class Kinds {
        final List<String> seen = new ArrayList<>();

        public record Point(int x, int y) {}

        @Tool(quick = true)
        public String kinds(long l, int i, double d, boolean b, String s, Optional<String> opt, List<Integer> list,
                Point p, Long boxed, float f) {
            String out = l + "|" + i + "|" + d + "|" + b + "|" + s + "|" + opt.orElse("-") + "|" + list + "|" + p + "|"
                    + boxed + "|" + f;
            seen.add(out);
            return out;
        }

        @Tool(quick = true)
        public int small(int i) {
            return i;
        }
    }

    static final String STRANGE = "q\"b\\s/ n\n t\t é 中 😀 \u0001 end";

    static String kindsCall(String id, long l, double d, String s, String opt) {
        return "{\"id\":" + Json.write(id) + ",\"name\":\"kinds\",\"arguments\":{\"l\":" + l + ",\"i\":-7,\"d\":" + d
                + ",\"b\":true,\"s\":" + Json.write(s) + (opt == null ? "" : ",\"opt\":" + Json.write(opt))
                + ",\"list\":[1,2,3],\"p\":{\"x\":1,\"y\":-2},\"boxed\":5,\"f\":1.5}}";
    }

    @Test
    void aQuickMethodGetsEveryArgumentAsTheCallbackPathGivesIt() {
        Kinds quick = new Kinds();
        Kinds slow = new Kinds();
        String calls = "[" + kindsCall("c\"1é", Long.MIN_VALUE, 2.5e-3, STRANGE, "here") + ","
                + kindsCall("c2", 123456789012345678L, -0.0, "", null) + "]";
        try (Registry q = new Registry().register(quick);
                Registry s = new Registry().tool("kinds", "", new MethodTool(kindsMethod(), slow).schema(),
                        new MethodTool(kindsMethod(), slow))) {
            List<ToolResult> got = q.execute(calls);
            s.execute(calls, ExecOptions.DEFAULTS.withSequential(true));
            assertEquals(slow.seen, quick.seen); // the callback path binds through the same code: also compare
            assertEquals(List.of(Long.MIN_VALUE + "|-7|0.0025|true|" + STRANGE + "|here|[1, 2, 3]|Point[x=1, y=-2]|5|1.5",
                    "123456789012345678|-7|-0.0|true||-|[1, 2, 3]|Point[x=1, y=-2]|5|1.5"), quick.seen);
            assertEquals("c\"1é", got.get(0).id());
            assertEquals(quick.seen.get(0), got.get(0).content());
        }
    }

    private static java.lang.reflect.Method kindsMethod() {
        for (java.lang.reflect.Method m : Kinds.class.getMethods()) {
            if (m.getName().equals("kinds")) return m;
        }
        throw new AssertionError("no kinds method");
    }

    @Test
    void anArgumentTheParameterCannotTakeIsThatCallsToolErrorAndTheNextCallsStillRun() {
        // 2^31 is a JSON Schema integer but no Java int: Jackson's error for that call alone
        try (Registry r = new Registry().register(new Kinds())) {
            List<ToolResult> out = r.execute("[{\"id\":\"a\",\"name\":\"small\",\"arguments\":{\"i\":2147483648}},"
                    + "{\"id\":\"b\",\"name\":\"small\",\"arguments\":{\"i\":-2147483648}},"
                    + "{\"id\":\"c\",\"name\":\"small\",\"arguments\":{\"i\":12345678901234567890123}},"
                    + "{\"id\":\"d\",\"name\":\"small\",\"arguments\":{\"i\":7}}]");
            assertEquals(Outcome.TOOL_ERROR, out.get(0).outcome(), out.get(0).content());
            assertTrue(out.get(0).content().contains("2147483648"), out.get(0).content());
            assertEquals("-2147483648", out.get(1).content());
            assertEquals(Outcome.TOOL_ERROR, out.get(2).outcome(), out.get(2).content());
            assertEquals("7", out.get(3).content());
        }
    }

    @Test
    void handedOutCallsAreReadInAnyKeyOrderWithEscapesAndSpaces() throws IOException {
        Map<String, ToolEntry> quick = new ConcurrentHashMap<>();
        quick.put("kinds", new ToolEntry(new MethodTool(kindsMethod(), new Kinds())));
        quick.put("echo", new ToolEntry(call -> call.id() + ":" + call.tool() + ":" + call.argumentsJson()));
        String handed = " [ { \"arguments\" : {\"z\":[1,\"]}\"]} , \"name\":\"e\\u0063ho\", \"id\":\"x\\\"y\",\"\\u0069ndex\":3,"
                + "\"extra\":{\"k\":[{}]}} ,\n{\"index\":5,\"id\":\"k\",\"name\":\"kinds\",\"arguments\":{\"l\":1,\"i\":2,"
                + "\"d\":3,\"b\":false,\"s\":\"\\ud83d\\ude00\",\"list\":[],\"p\":{\"x\":0,\"y\":0},\"f\":0}} ,"
                + "{\"index\":6,\"id\":\"m\",\"name\":\"missing\",\"arguments\":{}} ]";
        JsonNode answers = answer(handed, quick);
        assertEquals(3, answers.size(), answers.toString());
        assertEquals(3, answers.get(0).path("index").asInt());
        assertEquals("x\"y:echo:{\"z\":[1,\"]}\"]}", answers.get(0).path("text").asText());
        assertEquals(5, answers.get(1).path("index").asInt());
        assertEquals("1|2|3.0|false|😀|-|[]|Point[x=0, y=0]|null|0.0", answers.get(1).path("text").asText());
        assertEquals(6, answers.get(2).path("index").asInt());
        assertTrue(answers.get(2).path("error").asText().contains("\"missing\""), answers.toString());
        assertEquals("[]", answerText("[]", quick));
    }

    @Test
    void brokenOrCutHandedOutCallsThrowAndNeverReadPastTheirEnd() {
        Map<String, ToolEntry> quick = Map.of("echo", new ToolEntry(call -> "x"));
        String whole = "[{\"index\":0,\"id\":\"a\\u00e9\",\"name\":\"echo\",\"arguments\":{\"s\":\"}\"}}]";
        for (int cut = 0; cut < whole.length(); cut++) {
            for (String tail : List.of("", "  \"}]}]")) { // none, or valid-looking JSON past the end not to read
                byte[] b = (whole.substring(0, cut) + tail).getBytes(StandardCharsets.UTF_8);
                int end = whole.substring(0, cut).getBytes(StandardCharsets.UTF_8).length;
                assertThrows(IOException.class, () -> HostBatch.answer(b, end, quick, new JsonOut()), "cut at " + cut);
            }
        }
        for (String bad : List.of("[{\"index\":\"0\"}]", "[{\"index\":0,\"id\":\"\\x\"}]", "{}", "[{\"index\" 0}]",
                "[{\"index\":0,\"id\":\"\\u12\"}]", "[{\"index\":0}{}]")) {
            assertThrows(IOException.class, () -> answerText(bad, quick), bad);
        }
    }

    @Test
    void theCursorReadsStringsIntegersAndSkipsValues() throws IOException {
        JsonCursor c = cursor("\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00é中\"");
        assertEquals("a\"\\/\b\f\n\r\té😀é中", c.string());
        for (String n : List.of("0", "-12", "123456789012345678", "-123456789012345678")) {
            JsonCursor k = cursor(n + ",");
            assertTrue(k.integer(), n);
            assertEquals(Long.parseLong(n), k.num, n);
        }
        for (String n : List.of("1234567890123456789", "1.5", "1e3", "2E-1", "-", "x")) {
            JsonCursor k = cursor(n);
            assertTrue(!k.integer(), n);
            assertEquals(0, k.i, n); // nothing consumed: Jackson reads it from here
        }
        JsonCursor s = cursor("{\"a\":\"}]\\\"{\",\"b\":[1,{\"c\":[]}],\"d\":\"\\\\\"} tail");
        assertEquals(0, s.skip());
        assertEquals(" tail", new String(s.b, s.i, s.end - s.i, StandardCharsets.UTF_8));
        assertTrue(cursor("true,").literal("true"));
        assertTrue(!cursor("truex").literal("true"));
    }

    @Test
    void answersAndCallsAreWrittenAsJacksonWritesThem() {
        for (String s : List.of(STRANGE, "", "\u007f\u0080\u07ff\u0800\uffff", "\\u0000")) {
            assertEquals(Json.write(s), new String(new JsonOut().quoted(s).bytes(), StandardCharsets.UTF_8), s);
        }
        // a lone surrogate half has no UTF-8: written as String.getBytes writes it
        assertEquals("\"a?b\"", new String(new JsonOut().quoted("a\ud800b").bytes(), StandardCharsets.UTF_8));
        JsonNode args = Json.read("{\"n\":[1,-2.5,1e300,12345678901234567890123,true,false,null,{\"s\":\"" + "é\\n\"}],"
                + "\"e\":{},\"a\":[]}");
        List<Call> calls = new ArrayList<>(List.of(Call.of("1", "t", args), Call.of(STRANGE, "t", Map.of("k", 1.25)),
                Call.of("3", "t", "{\"a\":1}"), new Call(null, null, null)));
        calls.add(null);
        assertEquals(Json.write(calls), new String(Call.write(calls), StandardCharsets.UTF_8));
    }

    @Test
    void resultsAreReadAsTheTreeReadThem() throws IOException {
        String json = "[{\"id\":\"a\\\"1\",\"name\":\"t\",\"content\":\"é\\n\",\"is_error\":true,\"outcome\":\"tool_error\","
                + "\"duration_us\":12,\"parts\":[{\"type\":\"text\",\"text\":\"x]\"}],\"structured_content\":{\"k\":[1]},"
                + "\"later\":{\"field\":[\"}\"]}},"
                + " {\"later\":1, \"id\" : \"b\", \"parts\":null,\"structured_content\":null,\"is_error\":false}]";
        List<ToolResult> out = ToolResult.listOf(json);
        assertEquals(2, out.size());
        assertEquals(new ToolResult(0, "a\"1", "t", "é\n", true, Outcome.TOOL_ERROR, 12,
                "[{\"type\":\"text\",\"text\":\"x]\"}]", "{\"k\":[1]}"), out.get(0));
        assertEquals(new ToolResult(1, "b", "", "", false, Outcome.ofWire(null), 0, null, null), out.get(1));
        assertEquals(List.of(), ToolResult.listOf(""));
        assertThrows(IllegalStateException.class, () -> ToolResult.listOf("[{\"id\":\"a\""));
    }

    public static final class Shapes {
        @Tool(quick = true)
        public static String twice(String s) {
            return s + s;
        }

        @Tool(quick = true)
        public void nothing() {}

        @Tool(quick = true)
        public String checked() throws IOException {
            throw new IOException("no such file");
        }

        @Tool(quick = true)
        public String error() {
            throw new AssertionError("broken invariant");
        }
    }

    @Test
    void aQuickMethodStaticOrVoidOrThrowingGivesWhatItsCallbackGave() {
        String calls = "[{\"id\":\"1\",\"name\":\"twice\",\"arguments\":{\"s\":\"ab\"}},"
                + "{\"id\":\"2\",\"name\":\"nothing\",\"arguments\":{}},"
                + "{\"id\":\"3\",\"name\":\"checked\",\"arguments\":{}},"
                + "{\"id\":\"4\",\"name\":\"error\",\"arguments\":{}}]";
        try (Registry q = new Registry().register(new Shapes())) {
            List<ToolResult> out = q.execute(calls);
            assertEquals("abab", out.get(0).content());
            assertEquals("null", out.get(1).content());
            assertEquals(Outcome.TOOL_ERROR, out.get(2).outcome());
            assertEquals("no such file", out.get(2).content());
            assertEquals(Outcome.TOOL_ERROR, out.get(3).outcome());
            assertEquals("broken invariant", out.get(3).content());
        }
    }

    public record Trip(String city, int nights, List<String> tags, Optional<String> note) {}

    @Test
    void aRecordIsBoundFromTheArgumentsTextAsFromTheirTree() {
        String text = "{\"city\":\"Z\\u00fcrich \\\"Z\\\"\",\"nights\":2,\"tags\":[\"x\",\"é\"]}";
        ToolCall fromText = new ToolCall(java.lang.foreign.MemorySegment.NULL, "a", "trip", text);
        ToolCall fromTree = new ToolCall(java.lang.foreign.MemorySegment.NULL, "a", "trip", text);
        fromTree.arguments(); // parsed first: bound from the tree, as before
        Trip want = new Trip("Zürich \"Z\"", 2, List.of("x", "é"), fromTree.argumentsAs(Trip.class).note());
        assertEquals(want, fromText.argumentsAs(Trip.class));
        assertEquals(want, fromTree.argumentsAs(Trip.class));
        ToolCall bad = new ToolCall(java.lang.foreign.MemorySegment.NULL, "a", "trip", "{\"nights\":\"two\"}");
        assertThrows(IllegalArgumentException.class, () -> bad.argumentsAs(Trip.class));
        try (Registry r = new Registry().recordTool("trip", "", Trip.class, ToolOptions.DEFAULTS.withQuick(true),
                Trip::toString)) {
            assertEquals(want.toString(), r.execute(List.of(Call.of("a", "trip", Map.of("city", "Zürich \"Z\"",
                    "nights", 2, "tags", List.of("x", "é"))))).get(0).content());
        }
    }

    @Test
    void aQuickBatchWithOptionsLongerThanTheScratchRuns() {
        List<String> approved = new ArrayList<>();
        for (int i = 0; i < 300; i++) approved.add("approved-" + "é".repeat(40) + i);
        ExecOptions o = ExecOptions.DEFAULTS.withLimit(2).withApprovedIds(approved).withDeadlineMs(60_000)
                .withRunId("run-" + "中".repeat(500));
        try (Registry r = new Registry().register(new Kinds())) {
            List<ToolResult> out = r.execute(List.of(Call.of("a", "small", Map.of("i", 1)),
                    Call.of("b", "small", Map.of("i", 2))), o);
            assertEquals(List.of("1", "2"), out.stream().map(ToolResult::content).toList());
            ExecOptions runOnly = ExecOptions.DEFAULTS.withRunId("run-" + "中".repeat(3000));
            assertEquals("3", r.execute(List.of(Call.of("c", "small", Map.of("i", 3))), runOnly).get(0).content());
        }
    }

    @Test
    void closeSeesEveryBatchInFlightAlsoPastTheSlots() {
        InFlight f = new InFlight();
        int[] held = new int[40];
        for (int i = 0; i < 40; i++) held[i] = f.add(1000 + i);
        List<Long> seen = new ArrayList<>();
        f.forEach(seen::add);
        assertEquals(40, seen.size());
        assertEquals(40, seen.stream().distinct().count());
        for (int i = 0; i < 40; i += 2) f.remove(held[i], 1000 + i);
        seen.clear();
        f.forEach(seen::add);
        assertEquals(20, seen.size());
        assertTrue(seen.stream().allMatch(b -> b % 2 == 1), seen.toString());
    }

    private static JsonCursor cursor(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return new JsonCursor(b, 0, b.length);
    }

    private static String answerText(String handed, Map<String, ToolEntry> quick) throws IOException {
        byte[] b = handed.getBytes(StandardCharsets.UTF_8);
        JsonOut out = new JsonOut();
        HostBatch.answer(b, b.length, quick, out);
        return new String(out.bytes(), StandardCharsets.UTF_8);
    }

    private static JsonNode answer(String handed, Map<String, ToolEntry> quick) throws IOException {
        return Json.read(answerText(handed, quick));
    }
}
