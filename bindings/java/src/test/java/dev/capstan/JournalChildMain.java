package dev.capstan;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A child process for JournalTest: with the journal at {@code args[0]}, runs "c1" (the tool {@code done}) to
 * completion, then "c2" ({@code charge}) and "c3" ({@code fetch}, idempotent) in parallel, and dies (halt, no
 * shutdown hooks) once both have started: the journal holds c1 completed and c2, c3 started only. Every
 * tool run is appended to the file {@code args[1]}.
 */
public final class JournalChildMain {
    static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}";

    /** The tools of both processes; {@code crash} halts the process once charge and fetch both started. */
    static Registry tools(Path ranLog, CountDownLatch bothStarted) {
        Registry r = new Registry();
        r.tool("done", "", SCHEMA, call -> ran(ranLog, "done", "done " + call.arguments().path("n").asInt()));
        r.tool("charge", "", SCHEMA, call -> {
            ran(ranLog, "charge", null);
            if (bothStarted != null) {
                bothStarted.countDown();
                bothStarted.await(30, TimeUnit.SECONDS);
                Runtime.getRuntime().halt(3); // the process dies between started and completed
            }
            return "charged";
        });
        r.tool("fetch", "", SCHEMA, ToolOptions.DEFAULTS.withIdempotent(), call -> {
            ran(ranLog, "fetch", null);
            if (bothStarted != null) {
                bothStarted.countDown();
                Thread.sleep(30_000); // the charge halts the process meanwhile
            }
            return "fetched";
        });
        return r;
    }

    static String ran(Path log, String tool, String result) throws Exception {
        Files.writeString(log, tool + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        return result;
    }

    public static void main(String[] args) throws Exception {
        Path journal = Path.of(args[0]);
        Path ranLog = Path.of(args[1]);
        Registry r = tools(ranLog, new CountDownLatch(2));
        Journal j = Journal.openJsonl(journal);
        r.setJournal(j, false);
        ExecOptions run = ExecOptions.DEFAULTS.withRunId("run-1");
        r.execute(List.of(Call.of("c1", "done", Map.of("n", 1))), run);
        r.execute(List.of(Call.of("c2", "charge", Map.of("n", 2)), Call.of("c3", "fetch", Map.of("n", 3))),
                run.withLimit(2));
        System.err.println("journal child: the crash did not happen");
        System.exit(1);
    }
}
