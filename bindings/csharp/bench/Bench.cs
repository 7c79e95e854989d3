// make csharp-bench: a trivial tool called through capstan beside the same
// method called the way a Unity or .NET developer would without capstan:
// parse the arguments, check them by hand, MethodInfo.Invoke, write the
// result as JSON. Also a batch of 100 tools that each wait 2 ms (I/O),
// against running them one after another and against Task.WhenAll.
// Prints figures; asserts nothing about time (STYLE 9).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Reflection;
using System.Text;
using System.Threading.Tasks;
using Capstan;

public static class BenchTools
{
    [Tool("Adds two integers.")]
    public static long Add(long a, long b) { return a + b; }

    [Tool("Adds two integers; runs on the caller's thread.", Flags = ToolFlags.Quick)]
    public static long QuickAdd(long a, long b) { return a + b; }

    [Tool("Waits 2 ms, as a tool doing I/O would.")]
    public static async Task<string> Io(long n)
    {
        await Task.Delay(2);
        return "done " + n;
    }
}

internal static class Bench
{
    private static readonly MethodInfo AddMethod = typeof(BenchTools).GetMethod("Add");

    // The peer: what a developer writes without capstan for one call.
    private static string Baseline(string name, string argumentsJson)
    {
        if (name != "add") return "{\"is_error\":true,\"content\":\"unknown tool " + name + "\"}";
        var args = Json.Parse(argumentsJson) as Dictionary<string, object>;
        object a, b;
        if (args == null || !args.TryGetValue("a", out a) || !(a is long) || !args.TryGetValue("b", out b) || !(b is long) || args.Count != 2)
            return "{\"is_error\":true,\"content\":\"add takes integers a and b\"}";
        var r = AddMethod.Invoke(null, new object[] { a, b });
        return "{\"is_error\":false,\"content\":\"" + Convert.ToString(r, System.Globalization.CultureInfo.InvariantCulture) + "\"}";
    }

    private static string Calls(int n, string name, Func<int, string> args)
    {
        var sb = new StringBuilder("[");
        for (int i = 0; i < n; i++)
        {
            if (i > 0) sb.Append(',');
            sb.Append("{\"id\":\"c").Append(i).Append("\",\"name\":\"").Append(name).Append("\",\"arguments\":").Append(args(i)).Append('}');
        }
        return sb.Append(']').ToString();
    }

    /// <summary>Median microseconds of one run of <paramref name="work"/>.</summary>
    private static double Median(Action work, int runs)
    {
        for (int i = 0; i < Math.Max(3, runs / 10); i++) work();
        var times = new double[runs];
        var sw = new Stopwatch();
        for (int i = 0; i < runs; i++)
        {
            sw.Restart();
            work();
            times[i] = sw.Elapsed.TotalMilliseconds * 1000.0;
        }
        Array.Sort(times);
        return times[runs / 2];
    }

    private static void Row(string what, double capstanUs, double baselineUs, string baseline)
    {
        Console.WriteLine("{0,-44} {1,12:F1} us {2,12:F1} us  ({3}; capstan/baseline {4:F2})",
            what, capstanUs, baselineUs, baseline, capstanUs / baselineUs);
    }

    private const string Peer = "reflection Invoke after parsing and checking by hand";

    /// <summary>One row for make bench-bindings (tools/bench_bindings.py); goal "&lt;= peer" or null.</summary>
    private static void BenchRow(string kase, string tool, string metric, double capstan, string peer, double peerValue, string goal)
    {
        var inv = System.Globalization.CultureInfo.InvariantCulture;
        string met = goal == null ? "null" : (capstan <= peerValue ? "true" : "false");
        Console.WriteLine(string.Format(inv,
            "BENCH-ROW {{\"binding\":\"csharp\",\"case\":\"{0}\",\"tool\":\"{1}\",\"metric\":\"{2}\",\"capstan\":{3:F3},\"peer\":\"{4}\",\"peer_value\":{5:F3},\"goal\":{6},\"met\":{7}}}",
            kase, tool, metric, capstan, peer, peerValue, goal == null ? "null" : "\"" + goal + "\"", met));
    }

    private static int Main()
    {
        Console.WriteLine("capstan " + Registry.LibraryVersion + ", Mono " + Type.GetType("Mono.Runtime").GetMethod("GetDisplayName", BindingFlags.NonPublic | BindingFlags.Static).Invoke(null, null) +
            ", " + Environment.ProcessorCount + " CPUs; medians");
        Console.WriteLine("{0,-44} {1,15} {2,15}", "", "capstan", "baseline");
        using (var reg = new Registry())
        {
            reg.AddTools(typeof(BenchTools));
            reg.AddTool("add_raw", "Adds two integers.",
                "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"],\"additionalProperties\":false}",
                c => { var d = c.Arguments; return ((long)d["a"] + (long)d["b"]).ToString(); });
            foreach (var n in new[] { 1, 100, 10000 })
            {
                int runs = n == 1 ? 20000 : n == 100 ? 500 : 20;
                var calls = Calls(n, "add", i => "{\"a\":" + i + ",\"b\":1}");
                var quick = Calls(n, "quick_add", i => "{\"a\":" + i + ",\"b\":1}");
                var raw = Calls(n, "add_raw", i => "{\"a\":" + i + ",\"b\":1}");
                var args = new string[n];
                for (int i = 0; i < n; i++) args[i] = "{\"a\":" + i + ",\"b\":1}";
                double baseline = Median(() => { for (int i = 0; i < n; i++) Baseline("add", args[i]); }, runs);
                string label = n == 1 ? "a lone call" : n + " calls";
                double viaQuick = Median(() => reg.ExecuteJson(quick), runs);
                Row(label + ", quick [Tool] method (Execute)", viaQuick, baseline, "parse, check, Invoke");
                Row(label + ", [Tool] method (Execute)", Median(() => reg.ExecuteJson(calls), runs), baseline, "parse, check, Invoke");
                Row(label + ", AddTool handler (Execute)", Median(() => reg.ExecuteJson(raw), runs), baseline, "parse, check, Invoke");
                string kase = n == 1 ? "lone call" : n + " calls";
                BenchRow(kase, "trivial", "wall us/call", viaQuick / n, Peer, baseline / n, "<= peer");
            }
            foreach (var n in new[] { 1, 100, 10000 })
            {
                int runs = n == 10000 ? 5 : 20;
                var io = Calls(n, "io", i => "{\"n\":" + i + "}");
                double whenAll = Median(() =>
                {
                    var ts = new Task<string>[n];
                    for (int i = 0; i < n; i++) ts[i] = BenchTools.Io(i);
                    Task.WaitAll(ts);
                }, runs);
                // Async tools hold no thread while they wait: every call may wait at once.
                double viaCapstan = Median(() => reg.ExecuteAsync(io, new ExecOptions { Limit = (uint)n }).Wait(), runs);
                string label = n == 1 ? "a lone I/O call of 2 ms" : n + " I/O calls of 2 ms";
                Row(label + " (ExecuteAsync)", viaCapstan, whenAll, "Task.WhenAll");
                if (n == 100)
                {
                    double sequential = Median(() => { for (int i = 0; i < 100; i++) BenchTools.Io(i).Wait(); }, 5);
                    Row(label + " (ExecuteAsync)", viaCapstan, sequential, "one after another");
                }
                BenchRow(n == 1 ? "lone call" : n + " calls", "2 ms I/O", "ms total", viaCapstan / 1000.0, "Task.WhenAll", whenAll / 1000.0, null);
            }
        }
        return 0;
    }
}
