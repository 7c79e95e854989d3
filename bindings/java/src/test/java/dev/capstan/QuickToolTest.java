package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Quick tools ({@link ToolOptions#quick()}): run on the calling thread through capstan's host batches. */
class QuickToolTest {
    static final String ADD_SCHEMA = RegistryTest.ADD_SCHEMA;

    @Test
    void aQuickToolRunsOnTheCallingThreadWithCheckedArgumentsAndOthersOnThePool() {
        AtomicReference<Thread> quickThread = new AtomicReference<>();
        AtomicReference<Thread> slowThread = new AtomicReference<>();
        AtomicInteger quickRuns = new AtomicInteger();
        try (Registry r = new Registry()
                .tool("add", "Adds.", ADD_SCHEMA, ToolOptions.DEFAULTS.withQuick(true), call -> {
                    quickRuns.incrementAndGet();
                    quickThread.set(Thread.currentThread());
                    return Map.of("sum", call.arguments().get("a").asInt() + call.arguments().get("b").asInt());
                })
                .tool("slow", "Not quick.", null, call -> {
                    slowThread.set(Thread.currentThread());
                    return "slow:" + call.id();
                })) {
            List<ToolResult> out = r.execute("[{\"id\":\"c1\",\"name\":\"add\",\"arguments\":{\"a\":2}},"
                    + "{\"id\":\"c2\",\"name\":\"slow\",\"arguments\":{}},"
                    + "{\"id\":\"c3\",\"name\":\"add\",\"arguments\":{\"a\":\"x\"}},"
                    + "{\"id\":\"c4\",\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":5}}]");
            assertEquals(List.of("c1", "c2", "c3", "c4"), out.stream().map(ToolResult::id).toList());
            assertEquals("{\"sum\":3}", out.get(0).content()); // the schema's default b = 1 filled in
            assertEquals("slow:c2", out.get(1).content());
            assertEquals(Outcome.INVALID_ARGUMENTS, out.get(2).outcome());
            assertEquals("{\"sum\":7}", out.get(3).content());
            assertEquals(2, quickRuns.get()); // the invalid call never reached the handler
            assertEquals(Thread.currentThread(), quickThread.get());
            assertNotEquals(Thread.currentThread(), slowThread.get());
        }
    }

    @Test
    void aQuickToolsExceptionIsAToolErrorAndTextStaysText() {
        try (Registry r = new Registry()
                .tool("boom", "Fails.", null, ToolOptions.DEFAULTS.withQuick(true), call -> {
                    throw new IllegalStateException("no such city");
                })
                .tool("hello", "Text.", null, ToolOptions.DEFAULTS.withQuick(true), call -> "hi " + call.tool())) {
            List<ToolResult> out = r.execute("[{\"id\":\"a\",\"name\":\"boom\",\"arguments\":{}},"
                    + "{\"id\":\"b\",\"name\":\"hello\",\"arguments\":{}}]");
            assertEquals(Outcome.TOOL_ERROR, out.get(0).outcome());
            assertTrue(out.get(0).content().contains("no such city"), out.get(0).content());
            assertEquals("hi hello", out.get(1).content());
        }
    }

    @Test
    void aToolNoLongerQuickRunsThroughItsCallbackAgain() {
        AtomicReference<Thread> ran = new AtomicReference<>();
        try (Registry r = new Registry().tool("t", "Quick first.", null, ToolOptions.DEFAULTS.withQuick(true),
                call -> "quick")) {
            assertEquals("quick", r.execute("[{\"id\":\"a\",\"name\":\"t\",\"arguments\":{}}]").get(0).content());
            r.tool("t", "Then not.", null, ToolOptions.DEFAULTS.withReplace(), call -> {
                ran.set(Thread.currentThread());
                return "callback";
            });
            assertEquals("callback", r.execute("[{\"id\":\"a\",\"name\":\"t\",\"arguments\":{}}]").get(0).content());
            assertTrue(ran.get() != null);
        }
    }

    @Test
    void aQuickToolMayExecuteOnItsRegistryAndLongAnswersAndArgumentsComeThroughWhole() {
        // the quick path reuses one native buffer per thread: a nested batch on the same thread, and texts
        // longer than the buffer, must not overwrite the outer batch's calls or answers
        try (Registry r = new Registry()) {
            ToolOptions quick = ToolOptions.DEFAULTS.withQuick(true);
            r.tool("echo", "", null, quick, c -> c.arguments().path("text").asText() + "!");
            r.tool("outer", "", null, quick, c -> "outer sees " + r.execute(List.of(Call.of("in", "echo",
                    Map.of("text", "inner")))).get(0).content());
            String big = "x\"y\\z\n".repeat(20_000);
            r.tool("big", "", null, quick, c -> big); // an answer far longer than its call
            List<ToolResult> res = r.execute(List.of(Call.of("1", "outer", Map.of()),
                    Call.of("2", "echo", Map.of("text", big)), Call.of("3", "big", Map.of()),
                    Call.of("4", "echo", Map.of("text", "after"))));
            assertEquals("outer sees inner!", res.get(0).content());
            assertEquals(big + "!", res.get(1).content());
            assertEquals(big, res.get(2).content());
            assertEquals("after!", res.get(3).content());
            assertEquals(big, r.execute(List.of(Call.of("5", "big", Map.of()))).get(0).content());
        }
    }
}
