package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The journal (issue #47): a restarted process gets completed calls back without running them again. */
class JournalTest {
    static final ExecOptions RUN = ExecOptions.DEFAULTS.withRunId("run-1");
    static final List<Call> CALLS = List.of(Call.of("c1", "done", Map.of("n", 1)), Call.of("c2", "charge", Map.of("n", 2)),
            Call.of("c3", "fetch", Map.of("n", 3)));

    /** Runs JournalChildMain: it dies between the started and completed records of charge and fetch. */
    static void crashChild(Path journal, Path ranLog) throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED",
                "-Dcapstan.lib=" + Registry.librarySource(), "-cp", System.getProperty("java.class.path"),
                "dev.capstan.JournalChildMain", journal.toString(), ranLog.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(3, p.exitValue(), "the child did not die inside charge: " + out);
    }

    static List<String> ran(Path log) throws Exception {
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    @Test
    void afterACrashTheCompletedCallIsNotRunAgainAndTheUnknownOnesFollowTheirPolicy(@TempDir Path dir)
            throws Exception {
        Path journal = dir.resolve("calls.jsonl");
        Path log = dir.resolve("ran.txt");
        crashChild(journal, log);
        assertEquals(List.of("done", "charge", "fetch"), sorted(ran(log)), "the child ran " + ran(log));

        List<ToolEvent> events = new CopyOnWriteArrayList<>();
        List<ToolResult> res;
        try (Registry r = JournalChildMain.tools(log, null); Journal j = Journal.openJsonl(journal)) {
            r.setJournal(j, false);
            r.setEventHook(events::add);
            res = r.execute(CALLS, RUN);
        }
        // c1 completed before the crash: its recorded result, its tool not run again
        assertEquals("done 1", res.get(0).content());
        assertFalse(res.get(0).isError());
        // c2 (charge, not idempotent) started and never completed: outcome unknown, not run again
        assertTrue(res.get(1).isError());
        assertTrue(res.get(1).content().startsWith("Outcome unknown:"), res.get(1).content());
        // c3 (fetch, idempotent) runs again
        assertEquals("fetched", res.get(2).content());
        assertEquals(List.of("done", "charge", "fetch", "fetch"), sorted(ran(log)));
        assertTrue(events.stream().anyMatch(e -> e.kind() == ToolEvent.Kind.REPLAYED && e.id().equals("c1")),
                "no REPLAYED event for c1: " + events);
    }

    private static List<String> sorted(List<String> ran) {
        List<String> head = new ArrayList<>(ran.subList(0, 1));
        List<String> mid = new ArrayList<>(ran.subList(1, 3));
        mid.sort(null); // charge and fetch started in either order
        head.addAll(mid);
        head.addAll(ran.subList(3, ran.size()));
        return head;
    }

    @Test
    void replayRunsNoToolAndFailsACallMissingFromTheRecording(@TempDir Path dir) throws Exception {
        Path journal = dir.resolve("calls.jsonl");
        Path log = dir.resolve("ran.txt");
        try (Registry r = JournalChildMain.tools(log, null); Journal j = Journal.openJsonl(journal)) {
            r.setJournal(j, false);
            r.execute(List.of(CALLS.get(0)), RUN);
        }
        assertEquals(List.of("done"), ran(log));
        List<ToolResult> res;
        try (Registry r = JournalChildMain.tools(log, null); Journal j = Journal.openJsonl(journal)) {
            r.setJournal(j, true);
            res = r.execute(List.of(CALLS.get(0), Call.of("c9", "done", Map.of("n", 9))), RUN);
        }
        assertEquals("done 1", res.get(0).content());
        assertTrue(res.get(1).isError());
        assertTrue(res.get(1).content().contains("not in the recording"), res.get(1).content());
        assertEquals(List.of("done"), ran(log), "replay ran a tool");
    }

    @Test
    void aReplayWhoseToolSchemaChangedFailsNamingTheTool(@TempDir Path dir) throws Exception {
        Path journal = dir.resolve("calls.jsonl");
        Path log = dir.resolve("ran.txt");
        try (Registry r = JournalChildMain.tools(log, null); Journal j = Journal.openJsonl(journal)) {
            r.setJournal(j, false);
            r.execute(List.of(CALLS.get(0)), RUN);
        }
        ToolResult res;
        try (Registry r = new Registry(); Journal j = Journal.openJsonl(journal)) {
            r.tool("done", "", "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\"}}}", c -> "stale?");
            r.setJournal(j, true);
            res = r.execute(List.of(CALLS.get(0)), RUN).get(0);
        }
        assertTrue(res.isError());
        assertTrue(res.content().contains("the schema of tool \"done\" changed"), res.content());
    }

    @Test
    void aJournalKeptByTheHostAnswersFromItsOwnStore() {
        Map<String, String> store = new HashMap<>();
        Journal.Store mine = new Journal.Store() {
            @Override
            public synchronized void record(String json) {
                var n = Json.read(json);
                String kind = n.path("kind").asText();
                String key = n.path("run").asText() + "/" + n.path("call").asText();
                if (kind.equals("completed") || kind.equals("started") && !store.containsKey(key)) store.put(key, json);
            }

            @Override
            public synchronized String lookup(String runId, String callId) {
                return store.get(runId + "/" + callId);
            }
        };
        int[] runs = {0};
        for (int i = 0; i < 2; i++) {
            try (Registry r = new Registry(); Journal j = Journal.of(mine)) {
                r.tool("count", "", null, c -> "run " + ++runs[0]);
                r.setJournal(j, false);
                assertEquals("run 1", r.execute(List.of(Call.of("k1", "count", Map.of())), RUN).get(0).content());
            }
        }
        assertEquals(1, runs[0], "the second registry ran the tool again");
    }

    @Test
    void badJournalsAreRefusedWithAClearError(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"kind\":\"nope\"}\n");
        CapstanException e = assertThrows(CapstanException.class, () -> Journal.openJsonl(bad));
        assertTrue(e.getMessage().contains("record at line 1"), e.getMessage());
        Journal j = Journal.openJsonl(dir.resolve("ok.jsonl"));
        j.close();
        try (Registry r = new Registry()) {
            IllegalStateException closed = assertThrows(IllegalStateException.class, () -> r.setJournal(j, false));
            assertTrue(closed.getMessage().contains("journal is closed"), closed.getMessage());
        }
    }
}
