package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Log messages of a running tool ({@code capstan_call_log}, {@code CAPSTAN_EVENT_LOG}). */
class LogTest {
    @Test
    void logMessagesReachTheEventHookInOrderBetweenStartedAndFinished() {
        ConcurrentLinkedQueue<ToolEvent> events = new ConcurrentLinkedQueue<>();
        AtomicReference<ToolCall> kept = new AtomicReference<>();
        try (Registry r = new Registry()) {
            r.tool("chatty", "", null, call -> {
                kept.set(call);
                assertTrue(call.log(LogLevel.INFO, "started"));
                assertTrue(call.log("warning", "half way"));
                return "done";
            });
            r.setEventHook(events::add);
            assertEquals("done", r.execute(List.of(Call.of("l1", "chatty", Map.of()))).get(0).content());
            List<ToolEvent> seen = List.copyOf(events);
            assertEquals(List.of(ToolEvent.Kind.STARTED, ToolEvent.Kind.LOG, ToolEvent.Kind.LOG,
                    ToolEvent.Kind.FINISHED), seen.stream().map(ToolEvent::kind).toList(), seen.toString());
            assertEquals(LogLevel.INFO, seen.get(1).level());
            assertEquals("started", seen.get(1).message());
            assertEquals(LogLevel.WARNING, seen.get(2).level());
            assertEquals("half way", seen.get(2).message());
            assertEquals("l1", seen.get(1).id());
            assertEquals("chatty", seen.get(1).tool());
            assertNull(seen.get(0).level());
            assertNull(seen.get(3).level());
            // the call has its result: a late log is refused without a throw and reaches nobody
            assertFalse(kept.get().log(LogLevel.ERROR, "late"));
            assertFalse(kept.get().log("error", "late"));
            assertEquals(4, events.size(), events.toString());
        }
    }

    @Test
    void everyLevelReachesTheHookAndMcpNamesMapToIt() {
        ConcurrentLinkedQueue<ToolEvent> events = new ConcurrentLinkedQueue<>();
        try (Registry r = new Registry()) {
            r.tool("loud", "", null, call -> {
                for (LogLevel l : LogLevel.values()) call.log(l.mcpName(), l.name());
                return "ok";
            });
            r.setEventHook(events::add);
            r.execute(List.of(Call.of("l2", "loud", Map.of())));
        }
        List<ToolEvent> logs = events.stream().filter(e -> e.kind() == ToolEvent.Kind.LOG).toList();
        assertEquals(Arrays.asList(LogLevel.values()), logs.stream().map(ToolEvent::level).toList());
        assertEquals(Arrays.stream(LogLevel.values()).map(LogLevel::name).toList(),
                logs.stream().map(ToolEvent::message).toList());
        assertEquals(List.of("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
                Arrays.stream(LogLevel.values()).map(LogLevel::mcpName).toList());
    }

    @Test
    void aBadLevelOrMessageIsRefusedAndNothingReachesTheHook() {
        ConcurrentLinkedQueue<ToolEvent> events = new ConcurrentLinkedQueue<>();
        List<String> refused = new ArrayList<>();
        try (Registry r = new Registry()) {
            r.tool("sloppy", "", null, call -> {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> call.log("verbose", "x"));
                refused.add(e.getMessage());
                assertThrows(IllegalArgumentException.class, () -> call.log("INFO", "x")); // MCP's names are lower case
                assertThrows(NullPointerException.class, () -> call.log((LogLevel) null, "x"));
                assertThrows(NullPointerException.class, () -> call.log(LogLevel.INFO, null));
                CapstanException big = assertThrows(CapstanException.class,
                        () -> call.log(LogLevel.INFO, "x".repeat(64 * 1024 + 1)));
                refused.add(big.status());
                return "ok";
            });
            r.setEventHook(events::add);
            assertEquals("ok", r.execute(List.of(Call.of("s", "sloppy", Map.of()))).get(0).content());
        }
        assertEquals(List.of(ToolEvent.Kind.STARTED, ToolEvent.Kind.FINISHED),
                events.stream().map(ToolEvent::kind).toList(), events.toString());
        assertTrue(refused.get(0).contains("\"verbose\"") && refused.get(0).contains("emergency"), refused.get(0));
        assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", refused.get(1));
    }
}
