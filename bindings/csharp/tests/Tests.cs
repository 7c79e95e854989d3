// The C# binding's tests (`make csharp-test`): a plain runner, no test
// framework (NuGet is out of reach here), run by Mono's JIT and again under
// `mono --full-aot`, which like IL2CPP refuses to call native code back into
// anything but a static [MonoPInvokeCallback] method. Ends with the line
// "csharp: N passed, M failed".
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Capstan;


public enum Unit { Celsius, Fahrenheit }

public class Point
{
    public double X;
    public double Y;
    [Param("A label shown beside the point.")]
    public string Label { get; set; }
}

public static class WeatherTools
{
    [Tool("Current temperature in a city.")]
    public static object GetWeather([Param("The city's name.")] string city, Unit unit = Unit.Celsius, int? days = null)
    {
        return new Dictionary<string, object> { { "city", city }, { "unit", unit }, { "t", unit == Unit.Celsius ? 21 : 70 }, { "days", days } };
    }

    [Tool("Sums points.", Name = "sum_points")]
    public static double Sum(Point[] points, List<int> weights)
    {
        double s = 0;
        for (int i = 0; i < points.Length; i++) s += (points[i].X + points[i].Y) * weights[i];
        return s;
    }

    [Tool("Echoes later.")]
    public static async Task<string> EchoLater(string text, ToolCall call)
    {
        await Task.Delay(10);
        return text + " (" + call.Id + ")";
    }

    [Tool("Fails.")]
    public static string Broken()
    {
        throw new InvalidOperationException("the sensor is offline");
    }

    public static string NotATool() { return ""; }
}

public sealed class Counter
{
    private int n;

    [Tool("Counts up.")]
    public int Next() { return ++n; }
}

public static class BadTools
{
    [Tool("Takes a callback.")]
    public static string Hook(Action callback) { return ""; }
}

internal static partial class Tests
{
    private static int passed, failed;

    private static void Check(bool ok, string what)
    {
        if (!ok) throw new Exception("check failed: " + what);
    }

    // CAPSTAN_TEST_ONLY=words: only the tests whose name holds them (a quick check by hand).
    private static readonly string Only = Environment.GetEnvironmentVariable("CAPSTAN_TEST_ONLY");

    private static void Run(string name, Action test)
    {
        if (!string.IsNullOrEmpty(Only) && !name.Contains(Only)) return;
        try
        {
            test();
            passed++;
            Console.WriteLine("ok: " + name);
        }
        catch (Exception e)
        {
            failed++;
            Console.WriteLine("FAILED: " + name + ": " + e);
        }
    }

    private const string AddSchema =
        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\",\"default\":1}},\"required\":[\"a\"]}";

    private static Registry Adder()
    {
        var reg = new Registry();
        reg.AddTool("add", "Adds two integers.", AddSchema, call =>
        {
            var args = call.Arguments;
            return ((long)args["a"] + (long)args["b"]).ToString();
        });
        return reg;
    }

    private static int Main(string[] argv)
    {
        // The child process of the stdio MCP test: serve the adder on stdin/stdout.
        if (argv.Length == 1 && argv[0] == "--serve-stdio")
        {
            using (var reg = Adder()) reg.ServeMcpStdio(new McpServerOptions { Name = "csharp-stdio" });
            return 0;
        }
        // The child process of the journal test: killed while its calls run.
        if (argv.Length == 3 && argv[0] == "--journal-child") return JournalChild(argv[1], argv[2]);
        Run("the library loads and says its version", () =>
            Check(Registry.LibraryVersion.StartsWith("0.4."), Registry.LibraryVersion));

        Run("a tool runs with its validated arguments, defaults filled in", () =>
        {
            using (var reg = Adder())
            {
                var r = reg.Execute("[{\"id\":\"1\",\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}},{\"id\":\"2\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":41}\"}]");
                Check(r.Length == 2 && r[0].Id == "1" && r[0].Content == "5" && r[0].Outcome == "ok" && !r[0].IsError, "first");
                Check(r[1].Id == "2" && r[1].Content == "42", "second: " + r[1].Content);
            }
        });

        Run("invalid arguments and unknown tools are results naming what was wrong", () =>
        {
            using (var reg = Adder())
            {
                var r = reg.Execute("[{\"id\":\"1\",\"name\":\"add\",\"arguments\":{\"b\":\"x\"}},{\"id\":\"2\",\"name\":\"ad\"}]");
                Check(r[0].Outcome == "invalid_arguments" && r[0].IsError && r[0].Content.Contains("\"a\""), r[0].Content);
                Check(r[1].Outcome == "unknown_tool" && r[1].Content.Contains("add"), r[1].Content);
            }
        });

        Run("an exception in a tool is a tool error the model reads", () =>
        {
            using (var reg = new Registry())
            {
                reg.AddTool("boom", "", null, call => { throw new InvalidOperationException("disk full"); });
                var r = reg.Execute("{\"id\":\"1\",\"name\":\"boom\"}");
                Check(r[0].Outcome == "tool_error" && r[0].Content.Contains("InvalidOperationException: disk full"), r[0].Content);
            }
        });

        Run("a bad name or schema throws CapstanException with the status", () =>
        {
            using (var reg = new Registry())
            {
                try
                {
                    reg.AddTool("bad name!", "", null, c => "");
                    Check(false, "no exception");
                }
                catch (CapstanException e)
                {
                    Check(e.Status == "CAPSTAN_ERR_INVALID_NAME" && e.Detail.Length > 0, e.Message);
                }
                try
                {
                    reg.AddTool("t", "", "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"strin\"}}}", c => "");
                    Check(false, "no exception");
                }
                catch (CapstanException e)
                {
                    Check(e.Status == "CAPSTAN_ERR_INVALID_SCHEMA", e.Message);
                }
            }
        });

        Run("calls that are not calls throw INVALID_CALLS", () =>
        {
            using (var reg = Adder())
            {
                try
                {
                    reg.Execute("{\"id\":");
                    Check(false, "no exception");
                }
                catch (CapstanException e)
                {
                    Check(e.Status == "CAPSTAN_ERR_INVALID_CALLS" && e.Detail.Contains("not valid JSON"), e.Message);
                }
            }
        });

        Run("calls run in parallel on capstan's threads", () =>
        {
            using (var reg = new Registry())
            {
                int running = 0, most = 0;
                reg.AddTool("wait", "", null, c =>
                {
                    int now = Interlocked.Increment(ref running);
                    lock (reg) most = Math.Max(most, now);
                    // Long enough that the four overlap on a loaded machine; the check is on overlap, not time.
                    Thread.Sleep(300);
                    Interlocked.Decrement(ref running);
                    return "done";
                });
                var r = reg.Execute("[{\"name\":\"wait\"},{\"name\":\"wait\"},{\"name\":\"wait\"},{\"name\":\"wait\"}]");
                Check(r.Length == 4 && r[3].Id == "call_3" && r[3].Content == "done", "results");
                Check(most >= 2, "at most " + most + " ran at once");
            }
        });

        Run("a task-returning tool completes when its task ends", () =>
        {
            using (var reg = new Registry())
            {
                var gate = new TaskCompletionSource<string>();
                reg.AddAsyncTool("later", "", null, c => gate.Task.ContinueWith(t => t.Result + " " + c.Id));
                reg.AddAsyncTool("fails", "", null, c => Task.Factory.StartNew(new Func<string>(() => { throw new ArgumentException("no such city"); })));
                var run = reg.ExecuteAsync("[{\"id\":\"x\",\"name\":\"later\"},{\"id\":\"y\",\"name\":\"fails\"}]");
                Check(!run.Wait(100), "finished before its task");
                gate.SetResult("answer");
                Check(run.Wait(60000), "never finished");
                Check(run.Result[0].Content == "answer x" && run.Result[0].Outcome == "ok", run.Result[0].Content);
                Check(run.Result[1].Outcome == "tool_error" && run.Result[1].Content.Contains("no such city"), run.Result[1].Content);
            }
        });

        Run("main-thread tools run in Pump, on the pumping thread", () =>
        {
            using (var reg = new Registry())
            {
                int mainThread = Thread.CurrentThread.ManagedThreadId;
                int ranOn = -1;
                reg.AddTool("ui", "", null, c => { ranOn = Thread.CurrentThread.ManagedThreadId; return "drawn"; }, ToolFlags.MainThread);
                var run = reg.ExecuteAsync("{\"id\":\"1\",\"name\":\"ui\"}");
                int ran = 0;
                for (int frame = 0; frame < 6000 && !run.IsCompleted; frame++)
                {
                    ran += reg.Pump(5);
                    Thread.Sleep(1);
                }
                Check(run.Wait(60000), "never finished");
                Check(ran == 1 && ranOn == mainThread, "ran " + ran + " on thread " + ranOn + ", main is " + mainThread);
                Check(run.Result[0].Content == "drawn", run.Result[0].Content);
            }
        });

        Run("ToolsJson exports each provider's format", () =>
        {
            using (var reg = Adder())
            {
                var chat = (List<object>)Json.Parse(reg.ToolsJson(Format.OpenAIChat));
                var fn = (Dictionary<string, object>)((Dictionary<string, object>)chat[0])["function"];
                Check((string)fn["name"] == "add" && (string)fn["description"] == "Adds two integers.", "chat");
                var anthropic = (List<object>)Json.Parse(reg.ToolsJson(Format.Anthropic));
                Check(((Dictionary<string, object>)anthropic[0]).ContainsKey("input_schema"), "anthropic");
            }
        });

        Run("RunTurn answers an OpenAI Chat response with tool messages", () =>
        {
            using (var reg = Adder())
            {
                var response = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":[" +
                    "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1,\\\"b\\\":2}\"}}]}}]}";
                var messages = (List<object>)Json.Parse(reg.RunTurn(Format.OpenAIChat, response));
                var m = (Dictionary<string, object>)messages[0];
                Check((string)m["role"] == "tool" && (string)m["tool_call_id"] == "call_a" && (string)m["content"] == "3", "message");
                try
                {
                    reg.RunTurn(Format.OpenAIChat, "{\"error\":{\"message\":\"Rate limit\",\"type\":\"rate_limit_error\"}}");
                    Check(false, "no exception");
                }
                catch (CapstanException e)
                {
                    Check(e.Status == "CAPSTAN_ERR_PROVIDER_ERROR", e.Message);
                }
            }
        });

        Run("a disposed registry throws ObjectDisposedException, and each handler is released once", () =>
        {
            int before = Capstan.Callbacks.Live;
            var reg = Adder();
            reg.AddTool("two", "", null, c => "2");
            try { reg.AddTool("bad name!", "", null, c => ""); } catch (CapstanException) { }
            Check(Capstan.Callbacks.Live == before + 2, "live handlers: " + (Capstan.Callbacks.Live - before));
            reg.Dispose();
            Check(Capstan.Callbacks.Live == before, "released: " + (before + 2 - Capstan.Callbacks.Live) + " of 2");
            reg.Dispose();
            try
            {
                reg.Execute("{\"name\":\"add\",\"arguments\":{\"a\":1}}");
                Check(false, "no exception");
            }
            catch (ObjectDisposedException) { }
        });

        Run("Json reads what capstan writes and says where bad text is wrong", () =>
        {
            var v = (Dictionary<string, object>)Json.Parse("{\"s\":\"a\\u00e9\\n\",\"n\":-12,\"f\":1.5e2,\"l\":[true,null]}");
            Check((string)v["s"] == "a\u00e9\n" && (long)v["n"] == -12 && (double)v["f"] == 150.0, "values");
            Check(((List<object>)v["l"]).Count == 2, "list");
            try
            {
                Json.Parse("{\"a\":1,}");
                Check(false, "no exception");
            }
            catch (FormatException e)
            {
                Check(e.Message.Contains("offset 7"), e.Message);
            }
        });

        Run("tools from static methods: schema from the parameter types, arguments converted", () =>
        {
            using (var reg = new Registry())
            {
                Check(reg.AddTools(typeof(WeatherTools)) == 4, "four tools");
                var described = (List<object>)Json.Parse(reg.ToolsJson(Format.Describe));
                Dictionary<string, object> weather = null;
                foreach (Dictionary<string, object> t in described) if ((string)t["name"] == "get_weather") weather = t;
                Check(weather != null && (string)weather["description"] == "Current temperature in a city.", "get_weather described");
                var schema = (Dictionary<string, object>)weather["parameters"];
                var props = (Dictionary<string, object>)schema["properties"];
                Check((string)((Dictionary<string, object>)props["city"])["description"] == "The city's name.", "param description");
                var unit = (Dictionary<string, object>)props["unit"];
                Check(((List<object>)unit["enum"]).Count == 2 && (string)unit["default"] == "Celsius", "enum with its default");
                Check((string)((Dictionary<string, object>)props["days"])["type"] == "integer", "nullable int");
                var required = (List<object>)schema["required"];
                Check(required.Count == 1 && (string)required[0] == "city", "only city is required");
                var r = reg.Execute("[{\"id\":\"1\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}," +
                    "{\"id\":\"2\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\",\"unit\":\"Fahrenheit\",\"days\":3}}," +
                    "{\"id\":\"3\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\",\"unit\":\"Kelvin\"}}," +
                    "{\"id\":\"4\",\"name\":\"sum_points\",\"arguments\":{\"points\":[{\"X\":1,\"Y\":2,\"Label\":\"a\"},{\"X\":0.5,\"Y\":0.5}],\"weights\":[2,10]}}]");
                Check(r[0].Content == "{\"city\":\"Oslo\",\"unit\":\"Celsius\",\"t\":21,\"days\":null}", r[0].Content);
                Check(r[1].Content == "{\"city\":\"Rome\",\"unit\":\"Fahrenheit\",\"t\":70,\"days\":3}", r[1].Content);
                Check(r[2].Outcome == "invalid_arguments" && r[2].Content.Contains("Kelvin"), r[2].Content);
                Check(r[3].Outcome == "ok" && r[3].Content == "16", r[3].Content);
            }
        });

        Run("method tools: Task results, exceptions as tool errors, instance methods", () =>
        {
            using (var reg = new Registry())
            {
                reg.AddTools(typeof(WeatherTools));
                var r = reg.Execute("[{\"id\":\"e\",\"name\":\"echo_later\",\"arguments\":{\"text\":\"hi\"}},{\"id\":\"b\",\"name\":\"broken\"}]");
                Check(r[0].Outcome == "ok" && r[0].Content == "hi (e)", r[0].Content);
                Check(r[1].Outcome == "tool_error" && r[1].Content == "InvalidOperationException: the sensor is offline", r[1].Content);
                var counter = new Counter();
                Check(reg.AddTools(counter) == 1, "one instance tool");
                var n = reg.Execute("[{\"name\":\"next\"}]");
                n = reg.Execute("[{\"name\":\"next\"}]");
                Check(n[0].Content == "2", n[0].Content);
            }
        });

        Run("a parameter with no JSON form is refused at registration, naming it", () =>
        {
            using (var reg = new Registry())
            {
                try
                {
                    reg.AddTools(typeof(BadTools));
                    Check(false, "no exception");
                }
                catch (ArgumentException e)
                {
                    Check(e.Message.Contains("BadTools.Hook(callback) is a Action"), e.Message);
                }
            }
        });

        Parity();
        Behaviour();
        McpHost();
        Durable();
        HostJournal();
        Quick();

        // Mono waits at exit for every foreground thread that ran C# code, and
        // capstan's MCP threads (which may run a served tool) live as long as
        // its runtime: join them, as a console host that used MCP does.
        if (!CapstanRuntime.Shutdown()) Console.WriteLine("capstan's threads still run: " + CapstanRuntime.LastShutdownProblem);
        Console.WriteLine("csharp: " + passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
