package dev.capstan.bench;

import dev.capstan.Call;
import dev.capstan.Param;
import dev.capstan.Registry;
import dev.capstan.ToolResult;
import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.service.tool.DefaultToolExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Tool execution, one call and a batch of 100, through capstan's Java binding and through langchain4j's
 * DefaultToolExecutor (what its AiServices run for each ToolExecutionRequest). Prints figures; asserts
 * nothing about time. What each side does per call differs: capstan validates the arguments against the
 * tool's JSON Schema and runs the batch in parallel on its pool; langchain4j binds the JSON to the
 * method's parameters without a schema check, one call after the other (AiServices' default), or on an
 * executor (its executeToolsConcurrently), shown both ways.
 */
public final class ToolBench {
    public static final class Lc4jTools {
        @Tool("Adds a and b.")
        public long add(@P("first") long a, @P("second") long b) {
            return a + b;
        }

        @Tool("Waits 2 ms (an I/O-bound tool), then echoes.")
        public String io(@P("text") String text) throws InterruptedException {
            Thread.sleep(2);
            return text;
        }
    }

    public static final class CapstanTools {
        @dev.capstan.Tool(description = "Adds a and b.", quick = true)
        public long add(@Param("first") long a, @Param("second") long b) {
            return a + b;
        }

        @dev.capstan.Tool(description = "Waits 2 ms (an I/O-bound tool), then echoes.")
        public String io(@Param("text") String text) throws InterruptedException {
            Thread.sleep(2);
            return text;
        }
    }

    interface Body {
        void run() throws Exception;
    }

    /** Median wall time of {@code body} in microseconds over {@code reps} runs after {@code warm} warm-ups. */
    static double median(int warm, int reps, Body body) throws Exception {
        for (int i = 0; i < warm; i++) body.run();
        long[] t = new long[reps];
        for (int i = 0; i < reps; i++) {
            long s = System.nanoTime();
            body.run();
            t[i] = System.nanoTime() - s;
        }
        java.util.Arrays.sort(t);
        return t[reps / 2] / 1000.0;
    }

    /** Mean thread CPU time of {@code body} in microseconds (the calling thread only: a lone call runs there). */
    static double cpu(int warm, int reps, Body body) throws Exception {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int i = 0; i < warm; i++) body.run();
        long s = mx.getCurrentThreadCpuTime();
        for (int i = 0; i < reps; i++) body.run();
        return (mx.getCurrentThreadCpuTime() - s) / 1000.0 / reps;
    }

    public static void main(String[] args) throws Exception {
        int n = 100;
        Lc4jTools lt = new Lc4jTools();
        DefaultToolExecutor lcAdd = new DefaultToolExecutor(lt, Lc4jTools.class.getMethod("add", long.class, long.class));
        DefaultToolExecutor lcIo = new DefaultToolExecutor(lt, Lc4jTools.class.getMethod("io", String.class));
        ExecutorService pool = Executors.newFixedThreadPool(8);

        List<ToolExecutionRequest> addReqs = new ArrayList<>();
        List<ToolExecutionRequest> ioReqs = new ArrayList<>();
        List<Call> addCalls = new ArrayList<>();
        List<Call> ioCalls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            addReqs.add(ToolExecutionRequest.builder().id("c" + i).name("add").arguments("{\"a\":" + i + ",\"b\":2}").build());
            ioReqs.add(ToolExecutionRequest.builder().id("c" + i).name("io").arguments("{\"text\":\"x" + i + "\"}").build());
            addCalls.add(Call.of("c" + i, "add", Map.of("a", i, "b", 2)));
            ioCalls.add(Call.of("c" + i, "io", Map.of("text", "x" + i)));
        }
        List<ToolExecutionRequest> bigReqs = new ArrayList<>();
        List<Call> bigCalls = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            bigReqs.add(ToolExecutionRequest.builder().id("c" + i).name("add").arguments("{\"a\":" + i + ",\"b\":2}").build());
            bigCalls.add(Call.of("c" + i, "add", Map.of("a", i, "b", 2)));
        }
        String addJson1 = "[{\"id\":\"c0\",\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}]";

        try (Registry reg = new Registry().register(new CapstanTools())) {
            // same answers from both before timing anything
            List<ToolResult> check = reg.execute(addCalls);
            for (int i = 0; i < n; i++) {
                String lc = lcAdd.execute(addReqs.get(i), null);
                if (!lc.equals(check.get(i).content())) {
                    throw new AssertionError("call " + i + ": capstan " + check.get(i).content() + ", langchain4j " + lc);
                }
            }

            System.out.printf("tool execution, median wall time (us); JDK %s, %d cores, capstan %s%n",
                    System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                    Registry.libraryVersion());
            System.out.printf("%-44s %12s %12s%n", "case", "capstan", "langchain4j");
            double wall = median(2000, 2001, () -> reg.executeJson(addJson1));
            double lcWall = median(2000, 2001, () -> lcAdd.execute(addReqs.get(0), null));
            row("1 call, add", wall, lcWall);
            benchRow("lone call", "trivial", "wall us/call", wall, LC4J, lcWall, "<= peer");
            double cpu = cpu(5000, 20000, () -> reg.executeJson(addJson1));
            double lcCpu = cpu(5000, 20000, () -> lcAdd.execute(addReqs.get(0), null));
            row("1 call, add: thread CPU time", cpu, lcCpu);
            benchRow("lone call", "trivial", "cpu us/call", cpu, LC4J, lcCpu, "<= peer");
            double batch = median(200, 201, () -> reg.execute(addCalls));
            double lcSeq = median(200, 201, () -> {
                for (ToolExecutionRequest r : addReqs) lcAdd.execute(r, null);
            });
            row("100 calls, add (lc4j: sequential)", batch, lcSeq);
            benchRow("100 calls", "trivial", "ms total", batch / 1000, LC4J + " sequential", lcSeq / 1000, "<= peer");
            double batch2 = median(200, 201, () -> reg.execute(addCalls));
            double lcPar = median(200, 201, () -> concurrently(pool, lcAdd, addReqs));
            row("100 calls, add (lc4j: 8-thread executor)", batch2, lcPar);
            benchRow("100 calls", "trivial", "ms total", batch2 / 1000, LC4J + " 8-thread executor", lcPar / 1000,
                    null);
            double io = median(3, 11, () -> reg.execute(ioCalls));
            double lcIoSeq = median(3, 11, () -> {
                for (ToolExecutionRequest r : ioReqs) lcIo.execute(r, null);
            });
            row("100 calls, 2 ms I/O tool (lc4j: sequential)", io, lcIoSeq);
            benchRow("100 calls", "2 ms I/O", "ms total", io / 1000, LC4J + " sequential", lcIoSeq / 1000, null);
            double io2 = median(3, 11, () -> reg.execute(ioCalls));
            double lcIoPar = median(3, 11, () -> concurrently(pool, lcIo, ioReqs));
            row("100 calls, 2 ms I/O tool (lc4j: 8-thread executor)", io2, lcIoPar);
            benchRow("100 calls", "2 ms I/O", "ms total", io2 / 1000, LC4J + " 8-thread executor", lcIoPar / 1000,
                    null);
            double big = median(2, 7, () -> reg.execute(bigCalls));
            double lcBig = median(2, 7, () -> {
                for (ToolExecutionRequest r : bigReqs) lcAdd.execute(r, null);
            });
            row("10000 calls, add (lc4j: sequential)", big, lcBig);
            benchRow("10000 calls", "trivial", "calls/s", 10_000 / (big / 1e6), LC4J + " sequential",
                    10_000 / (lcBig / 1e6), null);
            // Last, so that the rows above keep their warm-up: the lone call once both sides are compiled
            // (C2) after 200,000 calls each, rounds alternating, the median of 7. The rows above fall in the JIT's
            // warm-up, where each side's cost is mostly how much Java code it runs; here it is the work.
            for (int i = 0; i < 200_000; i++) {
                reg.executeJson(addJson1);
                lcAdd.execute(addReqs.get(0), null);
            }
            double[] warmCpu = new double[7];
            double[] lcWarmCpu = new double[7];
            for (int round = 0; round < 7; round++) {
                warmCpu[round] = cpu(0, 20000, () -> reg.executeJson(addJson1));
                lcWarmCpu[round] = cpu(0, 20000, () -> lcAdd.execute(addReqs.get(0), null));
            }
            java.util.Arrays.sort(warmCpu);
            java.util.Arrays.sort(lcWarmCpu);
            row("1 call, add: thread CPU, compiled (200k calls)", warmCpu[3], lcWarmCpu[3]);
            benchRow("lone call", "trivial", "cpu us/call, after 200k calls", warmCpu[3], LC4J, lcWarmCpu[3], null);
            System.out.println("capstan runs a batch 8 calls at a time by default (ExecOptions.limit), validating"
                    + " each call's arguments against the schema; langchain4j does no schema check.");
        } finally {
            pool.shutdownNow();
        }
    }

    static void concurrently(ExecutorService pool, DefaultToolExecutor ex, List<ToolExecutionRequest> reqs)
            throws Exception {
        List<Future<String>> fs = new ArrayList<>(reqs.size());
        for (ToolExecutionRequest r : reqs) fs.add(pool.submit(() -> ex.execute(r, null)));
        for (Future<String> f : fs) f.get();
    }

    static final String LC4J = "langchain4j DefaultToolExecutor";

    /**
     * One row for make bench-bindings (tools/bench_bindings.py): {@code goal} compares capstan with the peer
     * ("<= peer" for times, ">= peer" for rates), null when issue #46 sets none for the row.
     */
    static void benchRow(String kase, String tool, String metric, double capstan, String peer, double peerValue,
            String goal) {
        String met = goal == null ? "null" : String.valueOf(goal.startsWith(">=") ? capstan >= peerValue
                : capstan <= peerValue);
        System.out.println(String.format(java.util.Locale.ROOT,
                "BENCH-ROW {\"binding\":\"java\",\"case\":\"%s\",\"tool\":\"%s\",\"metric\":\"%s\","
                        + "\"capstan\":%.3f,\"peer\":\"%s\",\"peer_value\":%.3f,\"goal\":%s,\"met\":%s}",
                kase, tool, metric, capstan, peer, peerValue, goal == null ? "null" : "\"" + goal + "\"", met));
    }

    static void row(String name, double capstan, double lc4j) {
        System.out.printf("%-44s %12.1f %12.1f%n", name, capstan, lc4j);
    }
}
