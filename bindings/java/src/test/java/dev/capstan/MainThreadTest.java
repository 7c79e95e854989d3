package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Main-thread tools and the pump, check_call, export options, names. */
class MainThreadTest {
    static final ToolOptions MAIN = ToolOptions.DEFAULTS.withMainThread(true);

    @Test
    void aMainThreadToolRunsOnlyOnThePumpingThread() throws Exception {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        Semaphore woken = new Semaphore(0);
        try (Registry r = new Registry()) {
            r.tool("ui", "touches the UI", null, MAIN, call -> {
                ranOn.set(Thread.currentThread());
                return "done";
            });
            r.setNotify(woken::release);
            // another thread executes: the call waits for this thread's pump
            CompletableFuture<List<ToolResult>> out = CompletableFuture.supplyAsync(
                    () -> r.execute(List.of(Call.of("1", "ui", Map.of()))));
            assertTrue(woken.tryAcquire(10, TimeUnit.SECONDS), "the notifier never said a call waits");
            assertNull(ranOn.get(), "the call ran before any pump");
            int ran = 0;
            while (ran == 0) ran = r.pump(50);
            assertEquals(1, ran);
            assertEquals(Thread.currentThread(), ranOn.get());
            assertEquals("done", out.get(10, TimeUnit.SECONDS).get(0).content());
        }
    }

    @Test
    void aThreadThatPumpedRunsItsOwnMainThreadCallsWhileItWaits() {
        try (Registry r = new Registry()) {
            Thread me = Thread.currentThread();
            r.tool("ui", "", null, MAIN, call -> Thread.currentThread() == me ? "here" : "elsewhere");
            assertEquals(0, r.pump(0)); // nothing queued; this thread is a main thread from now on
            assertEquals("here", r.execute(List.of(Call.of("1", "ui", Map.of()))).get(0).content());
        }
    }

    @Test
    void withoutAPumpTheDeadlineEndsAMainThreadCall() throws Exception {
        try (Registry r = new Registry()) {
            r.tool("ui", "", null, MAIN, call -> "never");
            ToolResult res = CompletableFuture.supplyAsync(() -> r.execute(List.of(Call.of("1", "ui", Map.of())),
                    ExecOptions.DEFAULTS.withDeadlineMs(100))).get(10, TimeUnit.SECONDS).get(0);
            assertEquals(Outcome.TIMEOUT, res.outcome());
            assertTrue(res.content().contains("capstan_registry_pump"), res.content());
        }
    }

    @Test
    void theWakeFdIsAFileDescriptor() {
        try (Registry r = new Registry()) {
            int fd = r.wakeFd();
            assertTrue(fd > 2, "fd " + fd);
            assertEquals(fd, r.wakeFd());
        }
    }

    @Test
    void checkCallValidatesWithoutRunning() {
        try (Registry r = RegistryTest.adder()) {
            r.tool("spy", "", null, call -> {
                throw new AssertionError("check_call ran a tool");
            });
            CallCheck ok = r.checkCall("add", "{\"a\":2}");
            assertTrue(ok.ok());
            assertEquals("{\"a\":2,\"b\":1}", ok.text()); // default filled in
            CallCheck bad = r.checkCall("add", "{\"a\":\"two\"}");
            assertEquals(Outcome.INVALID_ARGUMENTS, bad.outcome());
            assertEquals(r.execute(List.of(Call.of("1", "add", Map.of("a", "two")))).get(0).content(), bad.text());
            assertEquals(Outcome.UNKNOWN_TOOL, r.checkCall("nope", "").outcome());
            assertTrue(r.checkCall("spy", "").ok());
            // strict nulls: the null OpenAI strict mode sends for an optional argument is dropped
            assertEquals(Outcome.INVALID_ARGUMENTS, r.checkCall("add", "{\"a\":1,\"b\":null}").outcome());
            assertEquals("{\"a\":1,\"b\":1}", r.checkCall("add", "{\"a\":1,\"b\":null}", true).text());
        }
    }

    @Test
    void strictExportMakesEveryPropertyRequiredAndReportsWhatItCannot() {
        try (Registry r = RegistryTest.adder()) {
            r.tool("free", "", "{\"type\":\"object\",\"additionalProperties\":true}", call -> "");
            JsonNode plain = Json.read(r.toolsJson(Format.OPENAI_CHAT));
            Registry.Export strict = r.exportTools(Format.OPENAI_CHAT, Registry.ExportFlag.STRICT);
            JsonNode tools = Json.read(strict.toolsJson());
            JsonNode add = tools.get(0).path("function");
            assertEquals("add", add.path("name").asText());
            assertTrue(add.path("strict").asBoolean(), add.toString());
            assertEquals(List.of("a", "b"), List.of(add.path("parameters").path("required").get(0).asText(),
                    add.path("parameters").path("required").get(1).asText()));
            assertFalse(add.path("parameters").path("properties").path("b").has("default"), add.toString());
            assertFalse(plain.get(0).path("function").path("strict").asBoolean());
            JsonNode report = Json.read(strict.reportJson());
            assertTrue(report.toString().contains("\"free\""), report.toString()); // cannot be strict
        }
    }

    @Test
    void geminiLoweringUsesTheOpenApiSubset() {
        String schema = """
                {"type":"object","$defs":{"p":{"type":"string","pattern":"^x"}},
                 "properties":{"v":{"$ref":"#/$defs/p"}},"required":["v"]}""";
        try (Registry r = new Registry()) {
            r.tool("t", "", schema, call -> "");
            JsonNode plain = Json.read(r.toolsJson(Format.GEMINI)).get(0).path("functionDeclarations").get(0);
            assertTrue(plain.has("parametersJsonSchema"), plain.toString());
            Registry.Export low = r.exportTools(Format.GEMINI, Registry.ExportFlag.GEMINI_LOWER);
            JsonNode fn = Json.read(low.toolsJson()).get(0).path("functionDeclarations").get(0);
            assertFalse(fn.has("parametersJsonSchema"), fn.toString());
            assertEquals("string", fn.path("parameters").path("properties").path("v").path("type").asText().toLowerCase());
        }
    }

    @Test
    void namesSaysWhichProvidersTakeEachName() {
        try (Registry r = RegistryTest.adder()) {
            JsonNode n = Json.read(r.namesJson()).get(0);
            assertEquals("add", n.path("name").asText());
            assertTrue(n.path("openai").asBoolean() && n.path("anthropic").asBoolean(), n.toString());
        }
    }

    @Test
    void theOldFourFieldToolOptionsStillWork() {
        ToolOptions o = new ToolOptions(5, 6, true, true);
        assertEquals(3, o.flags());
        assertEquals(4 | 8 | 16, ToolOptions.DEFAULTS.withMainThread(true).withWaitForResponse(true).withDeferred(true)
                .flags());
        assertNotEquals(o, o.withDeferred(true));
        try (Registry r = new Registry()) {
            assertThrows(IllegalArgumentException.class, () -> r.search("x", 0, false));
        }
    }
}
