package dev.capstan;

import dev.capstan.bench.ToolBench;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.service.tool.DefaultToolExecutor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * Where a lone quick call's time goes (BENCHMARKS.md, "Java: the quick path without trees or arenas"): each
 * step alone, mean thread CPU per call. In the binding's package to reach its steps; a profile, not a test.
 *
 * <pre>
 *   QuickPathProfile             every step, 7 rounds of 20,000 calls alternating, medians (compiled)
 *   QuickPathProfile STEP WARM   one step in this JVM after WARM calls (the JIT's warm-up window)
 * </pre>
 */
public final class QuickPathProfile {
    private QuickPathProfile() {}

    interface Step {
        void run() throws Throwable;
    }

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static Object sink;

    static double cpu(int reps, Step s) throws Throwable {
        long t = MX.getCurrentThreadCpuTime();
        for (int i = 0; i < reps; i++) s.run();
        return (MX.getCurrentThreadCpuTime() - t) / 1000.0 / reps;
    }

    public static void main(String[] args) throws Throwable {
        String one = "[{\"id\":\"c0\",\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}]";
        Registry reg = new Registry().register(new ToolBench.CapstanTools());
        MemorySegment r = (MemorySegment) field(reg, "reg");
        @SuppressWarnings("unchecked")
        Map<String, ToolEntry> quick = (Map<String, ToolEntry>) field(reg, "quick");

        // the core alone: begin, finish with a fixed answer, free (the texts already in native memory)
        MethodHandle begin = Native.fn("capstan_host_batch_begin", Native.U32, Native.PTR, Native.PTR, Native.SIZE,
                Native.PTR, Native.PTR, Native.PTR, Native.PTR);
        MethodHandle finish = Native.fn("capstan_host_batch_finish", Native.U32, Native.PTR, Native.PTR, Native.SIZE,
                Native.U32, Native.PTR, Native.PTR);
        MethodHandle free = Native.fn("capstan_host_batch_free", null, Native.PTR);
        MemorySegment slots = Arena.global().allocate(64, 16);
        byte[] callsBytes = one.getBytes(StandardCharsets.UTF_8);
        MemorySegment calls = Arena.global().allocate(callsBytes.length);
        MemorySegment.copy(callsBytes, 0, calls, ValueLayout.JAVA_BYTE, 0, callsBytes.length);
        byte[] ansBytes = "[{\"index\":0,\"json\":3}]".getBytes(StandardCharsets.UTF_8);
        MemorySegment ans = Arena.global().allocate(ansBytes.length);
        MemorySegment.copy(ansBytes, 0, ans, ValueLayout.JAVA_BYTE, 0, ansBytes.length);
        Step core = () -> {
            Native.check((int) begin.invokeExact(r, calls, (long) callsBytes.length, MemorySegment.NULL, slots,
                    slots.asSlice(8), slots.asSlice(16)));
            MemorySegment batch = slots.get(Native.PTR, 0);
            Native.check((int) finish.invokeExact(batch, ans, (long) ansBytes.length, -1, slots.asSlice(24),
                    slots.asSlice(32)));
            free.invokeExact(batch);
        };
        byte[] handed = "[{\"index\":0,\"id\":\"c0\",\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}]"
                .getBytes(StandardCharsets.UTF_8);
        JsonOut out = new JsonOut();
        Step answer = () -> {
            out.len = 0;
            HostBatch.answer(handed, handed.length, quick, out);
        };
        ToolBench.Lc4jTools lt = new ToolBench.Lc4jTools();
        DefaultToolExecutor lc = new DefaultToolExecutor(lt, ToolBench.Lc4jTools.class.getMethod("add", long.class,
                long.class));
        ToolExecutionRequest req = ToolExecutionRequest.builder().id("c0").name("add").arguments("{\"a\":1,\"b\":2}")
                .build();

        String[] names = {"langchain4j execute", "capstan executeJson", "core: begin+finish+free",
            "answer(): read, bind, run, write"};
        Step[] steps = {() -> sink = lc.execute(req, null), () -> sink = reg.executeJson(one), core, answer};
        if (args.length == 2) {
            int k = Integer.parseInt(args[0]);
            int warm = Integer.parseInt(args[1]);
            for (int i = 0; i < warm; i++) steps[k].run();
            System.out.printf("%-34s %8.3f us after %d calls%n", names[k], cpu(20_000, steps[k]), warm);
        } else {
            double[][] t = new double[steps.length][7];
            for (int round = 0; round < 7; round++) {
                for (int i = 0; i < steps.length; i++) t[i][round] = cpu(20_000, steps[i]);
            }
            for (int i = 0; i < steps.length; i++) {
                Arrays.sort(t[i]);
                System.out.printf("%-34s %8.3f us (min %.3f)%n", names[i], t[i][3], t[i][0]);
            }
        }
        reg.close();
    }

    private static Object field(Object o, String name) throws ReflectiveOperationException {
        java.lang.reflect.Field f = o.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o);
    }
}
