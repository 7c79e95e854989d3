package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RegistryTest {
    static final String ADD_SCHEMA = """
            {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer","default":1}},
             "required":["a"],"additionalProperties":false}""";

    static Registry adder() {
        return new Registry().tool("add", "Adds a and b.", ADD_SCHEMA,
                call -> Map.of("sum", call.arguments().get("a").asInt() + call.arguments().get("b").asInt()));
    }

    @Test
    void loadsTheLibraryNamedByTheSystemPropertyOrEnv() {
        String want = System.getProperty("capstan.lib", "");
        if (want.isEmpty()) want = System.getenv().getOrDefault("CAPSTAN_LIB", "");
        if (!want.isEmpty()) assertEquals(java.nio.file.Path.of(want).toAbsolutePath().toString(), Registry.librarySource());
        assertTrue(Registry.libraryVersion().startsWith("0.4."), Registry.libraryVersion());
    }

    @Test
    void executeRunsAToolWithValidatedArgumentsAndDefaults() {
        try (Registry r = adder()) {
            List<ToolResult> out = r.execute("[{\"id\":\"c1\",\"name\":\"add\",\"arguments\":{\"a\":2}},"
                    + "{\"id\":\"c2\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":5}\"}]");
            assertEquals(2, out.size());
            assertEquals(new ToolResult(0, "c1", "add", "{\"sum\":3}", false, Outcome.OK, out.get(0).durationUs()),
                    out.get(0));
            assertEquals("{\"sum\":7}", out.get(1).content());
            assertEquals(1, out.get(1).index());
        }
    }

    @Test
    void executeTakesAListOfCalls() {
        try (Registry r = adder()) {
            List<ToolResult> out = r.execute(List.of(Call.of("x", "add", Map.of("a", 40, "b", 2))));
            assertEquals("{\"sum\":42}", out.get(0).content());
        }
    }

    @Test
    void badArgumentsAndUnknownToolsAreResultsNotExceptions() {
        try (Registry r = adder()) {
            List<ToolResult> out = r.execute(List.of(Call.of("1", "add", Map.of("a", "two")),
                    Call.of("2", "nope", Map.of())));
            assertEquals(Outcome.INVALID_ARGUMENTS, out.get(0).outcome());
            assertTrue(out.get(0).isError());
            assertEquals(Outcome.UNKNOWN_TOOL, out.get(1).outcome());
        }
    }

    @Test
    void anExceptionInAToolBecomesItsToolErrorAndTheRegistryGoesOn() {
        try (Registry r = adder()) {
            r.tool("boom", "", null, call -> {
                throw new IllegalStateException("disk on fire");
            });
            r.tool("boomAsync", "", null,
                    call -> CompletableFuture.failedFuture(new RuntimeException("later fire")));
            List<ToolResult> out = r.execute(List.of(Call.of("1", "boom", Map.of()), Call.of("2", "boomAsync", Map.of()),
                    Call.of("3", "add", Map.of("a", 1))));
            assertEquals(Outcome.TOOL_ERROR, out.get(0).outcome());
            assertTrue(out.get(0).content().contains("disk on fire"), out.get(0).content());
            assertEquals(Outcome.TOOL_ERROR, out.get(1).outcome());
            assertTrue(out.get(1).content().contains("later fire"), out.get(1).content());
            assertEquals(Outcome.OK, out.get(2).outcome());
        }
    }

    @Test
    void textAndJsonContent() {
        try (Registry r = new Registry()) {
            r.tool("text", "", null, call -> "plain {not json");
            r.tool("nul", "", null, call -> null);
            List<ToolResult> out = r.execute(List.of(Call.of("1", "text", Map.of()), Call.of("2", "nul", Map.of())));
            assertEquals("plain {not json", out.get(0).content());
            assertEquals(Outcome.OK, out.get(0).outcome());
            assertEquals("null", out.get(1).content());
        }
    }

    @Test
    void asyncToolsCompleteFromAnotherThreadAndRunConcurrently() throws Exception {
        CountDownLatch both = new CountDownLatch(2);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (Registry r = new Registry()) {
            r.asyncTool("wait", "", null, call -> CompletableFuture.supplyAsync(() -> {
                both.countDown();
                try {
                    // each call waits for the other: passes only if both are in flight at once
                    if (!both.await(10, TimeUnit.SECONDS)) return "alone";
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return "together " + call.id();
            }, pool));
            List<ToolResult> out = r.execute(List.of(Call.of("a", "wait", Map.of()), Call.of("b", "wait", Map.of())));
            assertEquals("together a", out.get(0).content());
            assertEquals("together b", out.get(1).content(), out.toString());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void submitDeliversEachResultAndCompletesTheFutureInCallOrder() throws Exception {
        ConcurrentLinkedQueue<String> threads = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
        try (Registry r = new Registry()) {
            r.tool("who", "", null, call -> {
                threads.add(Thread.currentThread().getName());
                return call.id();
            });
            StringBuilder calls = new StringBuilder("[");
            for (int i = 0; i < 20; i++) {
                calls.append(i == 0 ? "" : ",").append("{\"id\":\"c").append(i).append("\",\"name\":\"who\",\"arguments\":{}}");
            }
            try (Batch b = r.submit(calls.append("]").toString(), ExecOptions.DEFAULTS.withLimit(4),
                    res -> seen.add(res.id()))) {
                List<ToolResult> out = b.results().get(20, TimeUnit.SECONDS);
                assertEquals(20, out.size());
                for (int i = 0; i < 20; i++) assertEquals("c" + i, out.get(i).content());
                assertEquals(20, seen.size());
            }
            // capstan's pool threads ran the calls, named by the thread hook
            assertTrue(threads.stream().allMatch(n -> n.startsWith("capstan-")), threads.toString());
        }
    }

    @Test
    void cancelledBatchEndsCallsNotStartedCancelled() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (Registry r = new Registry()) {
            r.tool("slow", "", null, call -> {
                release.await(10, TimeUnit.SECONDS);
                return "done";
            });
            try (Batch b = r.submit(List.of(Call.of("1", "slow", Map.of()), Call.of("2", "slow", Map.of())),
                    ExecOptions.DEFAULTS.withSequential(true), null)) {
                b.cancel();
                release.countDown();
                List<ToolResult> out = b.results().get(20, TimeUnit.SECONDS);
                assertEquals(Outcome.CANCELLED, out.get(1).outcome());
            }
        }
    }

    @Test
    void invalidSchemaThrowsWithStatusAndPointer() {
        try (Registry r = new Registry()) {
            CapstanException e = assertThrows(CapstanException.class, () -> r.tool("bad", "", """
                    {"type":"object","properties":{"x":{"type":"nonsense"}}}""", call -> "x"));
            assertEquals("CAPSTAN_ERR_INVALID_SCHEMA", e.status());
            assertEquals(5, e.statusCode());
            assertEquals("/properties/x/type", e.pointer());
            assertNotEquals("", e.getMessage());
        }
    }

    @Test
    void invalidNameThrows() {
        try (Registry r = new Registry()) {
            CapstanException e = assertThrows(CapstanException.class, () -> r.tool("has space", "", null, c -> ""));
            assertEquals("CAPSTAN_ERR_INVALID_NAME", e.status());
        }
    }

    @Test
    void malformedCallsJsonThrowsInvalidCalls() {
        try (Registry r = adder()) {
            CapstanException e = assertThrows(CapstanException.class, () -> r.execute("{not json"));
            assertEquals("CAPSTAN_ERR_INVALID_CALLS", e.status());
        }
    }

    @Test
    void removedToolIsUnknownAndRemovingTwiceIsNotFound() {
        try (Registry r = adder()) {
            r.removeTool("add");
            assertEquals(Outcome.UNKNOWN_TOOL, r.execute(List.of(Call.of("1", "add", Map.of("a", 1)))).get(0).outcome());
            CapstanException e = assertThrows(CapstanException.class, () -> r.removeTool("add"));
            assertEquals("CAPSTAN_ERR_NOT_FOUND", e.status());
        }
    }

    @Test
    void closingReleasesEveryJavaObjectCapstanHeld() {
        int before = Native.liveHandles();
        Registry r = adder();
        r.tool("two", "", null, c -> "2");
        r.setApprover(req -> req.approve());
        assertEquals(before + 3, Native.liveHandles());
        r.close();
        assertEquals(before, Native.liveHandles());
        assertThrows(IllegalStateException.class, () -> r.execute("[]"));
        r.close(); // twice is fine
    }

    @Test
    void approverDecidesAndWithoutOneCallsAreDenied() {
        try (Registry r = new Registry()) {
            r.tool("rm", "Deletes a file.", null, ToolOptions.DEFAULTS.withRequiresApproval(true), c -> "deleted");
            assertEquals(Outcome.DENIED, r.execute(List.of(Call.of("1", "rm", Map.of()))).get(0).outcome());
            r.setApprover(req -> {
                if (req.argumentsJson().contains("keep")) req.deny("not that one");
                else req.approve();
            });
            List<ToolResult> out = r.execute(List.of(Call.of("1", "rm", Map.of("path", "tmp")),
                    Call.of("2", "rm", Map.of("path", "keep"))));
            assertEquals("deleted", out.get(0).content());
            assertEquals(Outcome.DENIED, out.get(1).outcome());
            assertTrue(out.get(1).content().contains("not that one"), out.get(1).content());
            r.setApprover(req -> {
                throw new IllegalStateException("approver broke");
            });
            ToolResult res = r.execute(List.of(Call.of("3", "rm", Map.of()))).get(0);
            assertEquals(Outcome.DENIED, res.outcome());
            // ids approved up front skip the approver
            res = r.execute(List.of(Call.of("4", "rm", Map.of())), ExecOptions.DEFAULTS.withApprovedIds(List.of("4")))
                    .get(0);
            assertEquals(Outcome.OK, res.outcome());
        }
    }

    @Test
    void timeoutIsAResult() {
        try (Registry r = new Registry()) {
            r.tool("sleepy", "", null, ToolOptions.DEFAULTS.withTimeoutMs(50), c -> {
                while (!c.cancelled()) Thread.sleep(5); // a timed-out call sees cancelled()
                return "late";
            });
            assertEquals(Outcome.TIMEOUT, r.execute(List.of(Call.of("1", "sleepy", Map.of()))).get(0).outcome());
        }
    }

    @Test
    void toolsJsonExportsTheSchemaForAProvider() {
        try (Registry r = adder()) {
            JsonNode tools = Json.read(r.toolsJson(Format.OPENAI_CHAT));
            assertEquals("add", tools.get(0).path("function").path("name").asText());
            assertEquals("integer", tools.get(0).path("function").path("parameters").path("properties").path("a")
                    .path("type").asText());
            assertFalse(r.statsJson().isEmpty());
        }
    }

    @Test
    void theEventHookSeesEachCallStartAndFinish() {
        ConcurrentLinkedQueue<ToolEvent> events = new ConcurrentLinkedQueue<>();
        try (Registry r = adder()) {
            r.setEventHook(events::add);
            r.execute(List.of(Call.of("e1", "add", Map.of("a", 1)), Call.of("e2", "add", Map.of("a", "bad"))));
            List<ToolEvent> fin = events.stream().filter(e -> e.kind() == ToolEvent.Kind.FINISHED)
                    .sorted(java.util.Comparator.comparingInt(ToolEvent::index)).toList();
            assertEquals(2, fin.size(), events.toString());
            assertEquals("e1", fin.get(0).id());
            assertEquals("add", fin.get(0).tool());
            assertEquals(Outcome.OK, fin.get(0).outcome());
            assertEquals(Outcome.INVALID_ARGUMENTS, fin.get(1).outcome());
            assertTrue(events.stream().anyMatch(e -> e.kind() == ToolEvent.Kind.STARTED && e.id().equals("e1")));
            r.setEventHook(e -> {
                throw new IllegalStateException("hook broke"); // dropped, the call is unaffected
            });
            assertEquals(Outcome.OK, r.execute(List.of(Call.of("e3", "add", Map.of("a", 1)))).get(0).outcome());
        }
    }

    @Test
    void needsApprovalListsOnlyGatedCallsNotApprovedYet() {
        try (Registry r = adder()) {
            r.tool("rm", "", null, ToolOptions.DEFAULTS.withRequiresApproval(true), c -> "deleted");
            List<Call> calls = List.of(Call.of("1", "add", Map.of("a", 1)), Call.of("2", "rm", Map.of()),
                    Call.of("3", "rm", Map.of()));
            JsonNode n = Json.read(r.needsApprovalJson(calls, ExecOptions.DEFAULTS.withApprovedIds(List.of("3"))));
            assertEquals(1, n.size());
            assertEquals("2", n.get(0).path("id").asText());
            assertEquals(1, n.get(0).path("index").asInt());
        }
    }

    @Test
    void aToolMayExecuteOnItsOwnRegistryButNotCloseIt() {
        Registry[] self = new Registry[1];
        try (Registry r = adder()) {
            self[0] = r;
            r.tool("nested", "", null, c -> r.execute(List.of(Call.of("in", "add", Map.of("a", 5)))).get(0).content());
            r.tool("closer", "", null, c -> {
                self[0].close();
                return "closed";
            });
            assertEquals("{\"sum\":6}", r.execute(List.of(Call.of("1", "nested", Map.of()))).get(0).content());
            ToolResult res = r.execute(List.of(Call.of("2", "closer", Map.of()))).get(0);
            assertEquals(Outcome.TOOL_ERROR, res.outcome());
            assertTrue(res.content().contains("close it from a host thread"), res.content());
            // still open
            assertEquals(Outcome.OK, r.execute(List.of(Call.of("3", "add", Map.of("a", 1)))).get(0).outcome());
        }
    }

    @Test
    void closeWaitsForAnExecuteOnAnotherThreadThenRefusesNewUses() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Registry r = new Registry().tool("hold", "", null, c -> {
            started.countDown();
            release.await(10, TimeUnit.SECONDS);
            return "held";
        });
        CompletableFuture<List<ToolResult>> running =
                CompletableFuture.supplyAsync(() -> r.execute(List.of(Call.of("1", "hold", Map.of()))));
        assertTrue(started.await(10, TimeUnit.SECONDS));
        Thread closer = Thread.ofPlatform().start(r::close);
        closer.join(200);
        assertTrue(closer.isAlive(), "close returned while an execute was running");
        release.countDown();
        closer.join(10_000);
        assertFalse(closer.isAlive());
        assertEquals("held", running.get(10, TimeUnit.SECONDS).get(0).content());
        assertThrows(IllegalStateException.class, () -> r.execute("[]"));
    }
}
