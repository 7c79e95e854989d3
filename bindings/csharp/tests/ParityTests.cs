// The rest of the surface (issue 50): batches and cancellation, the game
// loop, approval, events, deadlines, formats, history, search, streams and
// MCP. Fixtures are the project's own (tests/fixtures, $CAPSTAN_FIXTURES).
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using Capstan;

internal static partial class Tests
{
    private static T Throws<T>(Action a, string what) where T : Exception
    {
        try
        {
            a();
        }
        catch (T e)
        {
            return e;
        }
        throw new Exception("check failed: no " + typeof(T).Name + ": " + what);
    }

    private static string Fixture(string rel)
    {
        var dir = Environment.GetEnvironmentVariable("CAPSTAN_FIXTURES");
        if (string.IsNullOrEmpty(dir)) throw new Exception("CAPSTAN_FIXTURES is not set (make csharp-test sets it)");
        return File.ReadAllText(Path.Combine(dir, rel));
    }

    // Small stand-ins for LINQ: the tests reach only mscorlib, the one assembly AOT-compiled for the full-AOT run.
    private static int Count<T>(IEnumerable<T> xs, Predicate<T> p) { int n = 0; foreach (var x in xs) if (p(x)) n++; return n; }
    private static bool All<T>(IEnumerable<T> xs, Predicate<T> p) { foreach (var x in xs) if (!p(x)) return false; return true; }
    private static bool Any<T>(IEnumerable<T> xs, Predicate<T> p) { return Count(xs, p) > 0; }
    private static string Sorted(IEnumerable<int> xs) { var l = new List<int>(xs); l.Sort(); return string.Join(",", l); }

    private static Dictionary<string, object> Obj(object o) { return (Dictionary<string, object>)o; }
    private static List<object> Arr(object o) { return (List<object>)o; }

    // Same JSON value: both re-written by one writer.
    private static bool SameJson(string a, string b)
    {
        return MethodTools.JsonValue(Json.Parse(a)) == MethodTools.JsonValue(Json.Parse(b));
    }

    private const string AnyArgs = "{\"type\":\"object\"}";

    /// <summary>A registry with a tool for every call name in <paramref name="callsJson"/>, answering "ran NAME".</summary>
    private static Registry ToolsFor(string callsJson)
    {
        var reg = new Registry();
        var names = new List<string>();
        foreach (var c in Arr(Json.Parse(callsJson))) if (!names.Contains((string)Obj(c)["name"])) names.Add((string)Obj(c)["name"]);
        foreach (var n in names) reg.AddTool(n, "", AnyArgs, call => "ran " + call.Name);
        return reg;
    }

    private static void Parity()
    {
        Run("Submit hands each result over as its call finishes, then Completion has them all in call order", () =>
        {
            using (var reg = Adder())
            {
                var seen = new ConcurrentQueue<int>();
                using (var batch = reg.Submit("[{\"id\":\"a\",\"name\":\"add\",\"arguments\":{\"a\":1}},{\"id\":\"b\",\"name\":\"add\",\"arguments\":{\"a\":2}},{\"id\":\"c\",\"name\":\"nope\"}]",
                    null, r => seen.Enqueue(r.Index)))
                {
                    Check(batch.Completion.Wait(60000), "never completed");
                    var all = batch.Completion.Result;
                    Check(all.Length == 3 && all[0].Id == "a" && all[0].Content == "2" && all[1].Content == "3", "in call order");
                    Check(all[2].Outcome == "unknown_tool" && all[2].Index == 2, all[2].Outcome);
                    Check(seen.Count == 3 && Sorted(seen) == "0,1,2", "each index once: " + string.Join(",", seen));
                }
            }
        });

        Run("poll delivery hands results over only on the thread that polls", () =>
        {
            using (var reg = Adder())
            {
                int me = Thread.CurrentThread.ManagedThreadId;
                var threads = new List<int>();
                using (var batch = reg.Submit("[{\"name\":\"add\",\"arguments\":{\"a\":1}},{\"name\":\"add\",\"arguments\":{\"a\":5}}]",
                    null, r => threads.Add(Thread.CurrentThread.ManagedThreadId), Delivery.Poll))
                {
                    for (int frame = 0; frame < 60000 && !batch.Completion.IsCompleted; frame++)
                        if (batch.Poll() == 0) Thread.Sleep(1);
                    Check(batch.Completion.IsCompleted, "never completed");
                    Check(threads.Count == 2 && All(threads, t => t == me), "handed over on " + string.Join(",", threads));
                    Check(batch.Completion.Result[1].Content == "6", batch.Completion.Result[1].Content);
                }
                var cb = reg.Submit("{\"name\":\"add\",\"arguments\":{\"a\":1}}");
                Throws<InvalidOperationException>(() => cb.Poll(), "Poll of a callback batch");
                cb.Dispose();
                // Freed before its results were polled: Completion ends, cancelled, rather than never.
                var unpolled = reg.Submit("{\"name\":\"add\",\"arguments\":{\"a\":1}}", null, null, Delivery.Poll);
                unpolled.Dispose();
                Check(unpolled.Completion.IsCanceled, "Completion of a freed, unpolled batch: " + unpolled.Completion.Status);
            }
        });

        Run("a CancellationToken reaches the calls: a running call sees it, a waiting one ends cancelled", () =>
        {
            using (var reg = new Registry())
            {
                var started = new ManualResetEventSlim();
                reg.AddTool("spin", "", null, call =>
                {
                    started.Set();
                    int began = Environment.TickCount;
                    while (!call.IsCancelled && unchecked(Environment.TickCount - began) < 60000) Thread.Sleep(1);
                    return call.IsCancelled ? "saw the cancellation" : "never cancelled";
                });
                var cts = new CancellationTokenSource();
                var run = reg.ExecuteAsync("[{\"id\":\"1\",\"name\":\"spin\"},{\"id\":\"2\",\"name\":\"spin\"}]",
                    new ExecOptions { Limit = 1 }, cts.Token);
                Check(started.Wait(60000), "the first call never started");
                cts.Cancel();
                Check(run.Wait(60000), "never finished");
                var r = run.Result;
                Check(r[0].Outcome == "ok" && r[0].Content == "saw the cancellation", r[0].Outcome + ": " + r[0].Content);
                Check(r[1].Outcome == "cancelled", r[1].Outcome + ": " + r[1].Content);
            }
        });

        Run("a tool's timeout ends its call as timeout, and the running tool sees it cancelled", () =>
        {
            using (var reg = new Registry())
            {
                var saw = new ManualResetEventSlim();
                reg.AddTool("slow", "", null, call =>
                {
                    int began = Environment.TickCount;
                    while (!call.IsCancelled && unchecked(Environment.TickCount - began) < 60000) Thread.Sleep(1);
                    if (call.IsCancelled) saw.Set();
                    return "late";
                }, ToolFlags.None, 50);
                var r = reg.Execute("{\"name\":\"slow\"}");
                Check(r[0].Outcome == "timeout", r[0].Outcome + ": " + r[0].Content);
                Check(saw.Wait(60000), "the tool never saw its call cancelled");
            }
        });

        Run("a game loop woken by the notify pumps main-thread tools and polls results on its own thread", () =>
        {
            using (var reg = new Registry())
            {
                int me = Thread.CurrentThread.ManagedThreadId;
                int toolThread = -1, resultThread = -1;
                reg.AddTool("spawn", "", null, c => { toolThread = Thread.CurrentThread.ManagedThreadId; return "spawned"; }, ToolFlags.MainThread);
                // The wake-up a loop that sleeps between frames waits on.
                var woken = new ManualResetEventSlim();
                reg.SetNotify(() => woken.Set());
                using (var batch = reg.Submit("{\"name\":\"spawn\"}", null, r => resultThread = Thread.CurrentThread.ManagedThreadId, Delivery.Poll))
                {
                    Check(woken.Wait(60000), "the notify never woke the loop");
                    for (int frame = 0; frame < 60000 && !batch.Completion.IsCompleted; frame++)
                    {
                        // Update(): run what waits for this thread, take what finished.
                        if (reg.Pump(2) + batch.Poll() == 0) Thread.Sleep(1);
                    }
                    Check(batch.Completion.IsCompleted, "never completed");
                    Check(toolThread == me && resultThread == me, "tool on " + toolThread + ", result on " + resultThread + ", loop " + me);
                    Check(batch.Completion.Result[0].Content == "spawned", batch.Completion.Result[0].Content);
                }
            }
        });

        Run("StartInline runs the calls on the submitting thread before Submit returns (a host without threads)", () =>
        {
            using (var reg = new Registry())
            {
                int me = Thread.CurrentThread.ManagedThreadId, ranOn = -1;
                reg.AddTool("here", "", null, c => { ranOn = Thread.CurrentThread.ManagedThreadId; return "here"; });
                using (var batch = reg.Submit("{\"name\":\"here\"}", new ExecOptions { StartInline = true }, null, Delivery.Poll))
                {
                    Check(ranOn == me, "ran on " + ranOn + ", submitted on " + me);
                    Check(batch.Poll() == 1 && batch.Completion.IsCompleted && batch.Completion.Result[0].Content == "here", "polled at once");
                }
            }
        });

        Run("a deadline ends a call waiting for the pump as timeout, saying so", () =>
        {
            using (var reg = new Registry())
            {
                reg.AddTool("ui", "", null, c => "drawn", ToolFlags.MainThread);
                var r = reg.ExecuteAsync("{\"name\":\"ui\"}", new ExecOptions { DeadlineMs = 100 });
                Check(r.Wait(60000), "never finished");
                Check(r.Result[0].Outcome == "timeout" && r.Result[0].Content.Contains("capstan_registry_pump"), r.Result[0].Content);
            }
        });

        Run("the approver decides each guarded call, now or later; approved ids skip it; without one it is denied", () =>
        {
            using (var reg = new Registry())
            {
                reg.AddTool("launch", "", AnyArgs, c => "launched " + c.Id, ToolFlags.RequiresApproval);
                var calls = "[{\"id\":\"yes\",\"name\":\"launch\",\"arguments\":{\"n\":1}},{\"id\":\"no\",\"name\":\"launch\"},{\"id\":\"pre\",\"name\":\"launch\"}]";
                var opts = new ExecOptions { ApprovedIds = new[] { "pre" } };
                var waiting = Arr(Json.Parse(reg.NeedsApprovalJson(calls, opts)));
                Check(waiting.Count == 2 && (string)Obj(waiting[1])["id"] == "no", "needs approval: " + waiting.Count);
                var none = reg.Execute(calls, opts);
                Check(none[0].Outcome == "denied" && none[2].Outcome == "ok", "without an approver: " + none[0].Outcome);
                var asked = new ConcurrentQueue<string>();
                reg.SetApprover(a =>
                {
                    asked.Enqueue(a.Id);
                    if (a.Id == "yes") Check(SameJson(a.ArgumentsJson, "{\"n\":1}") && a.Tool == "launch", a.ArgumentsJson);
                    // Decided later, on another thread (a dialog answered frames later).
                    Task.Run(() => { if (a.Id == "yes") a.Approve(); else a.Deny("not during a boss fight"); });
                });
                // A deadline so that a decision that never comes fails the test instead of hanging it.
                opts.DeadlineMs = 60000;
                var r = reg.Execute(calls, opts);
                Check(r[0].Outcome == "ok" && r[0].Content == "launched yes", r[0].Content);
                Check(r[1].Outcome == "denied" && r[1].Content.Contains("not during a boss fight"), r[1].Content);
                Check(r[2].Outcome == "ok" && !Any(asked, x => x == "pre") && asked.Count == 2, "asked: " + string.Join(",", asked));
                reg.SetApprover(a => { throw new InvalidOperationException("no UI"); });
                var t = reg.Execute("{\"name\":\"launch\"}", new ExecOptions { DeadlineMs = 60000 });
                Check(t[0].Outcome == "denied" && t[0].Content.Contains("no UI"), t[0].Content);
            }
        });

        Run("the event hook sees each call start and finish, progress and logs; stats count the calls", () =>
        {
            using (var reg = new Registry())
            {
                reg.AddTool("work", "", null, c =>
                {
                    c.Progress(1, 2, "half");
                    c.Log(LogLevel.Warning, "hot");
                    Throws<CapstanException>(() => c.Progress(0.5, 2), "progress going back");
                    return "done";
                });
                var events = new ConcurrentQueue<ToolEvent>();
                reg.SetEventHook(e => events.Enqueue(e));
                reg.Execute("[{\"id\":\"w1\",\"name\":\"work\"},{\"id\":\"w2\",\"name\":\"work\"}]");
                reg.SetEventHook(null);
                var list = new List<ToolEvent>(events);
                Check(Count(list, e => e.Kind == EventKind.Started) == 2, "started");
                var finished = list.FindAll(e => e.Kind == EventKind.Finished);
                Check(finished.Count == 2 && All(finished, e => e.Outcome == "ok" && e.Tool == "work"), "finished");
                Check(Any(list, e => e.Kind == EventKind.Progress && e.Id == "w1" && e.Progress == 1 && e.Total == 2 && e.Message == "half"), "progress");
                Check(Any(list, e => e.Kind == EventKind.Log && e.Level == LogLevel.Warning && e.Message == "hot"), "log");
                var stats = Obj(Obj(Obj(Json.Parse(reg.StatsJson()))["tools"])["work"]);
                Check((long)stats["calls"] == 2 && (long)Obj(stats["outcomes"])["ok"] == 2, reg.StatsJson());
            }
        });

        Run("RunTurn answers every provider format, and the whole turn starts with the model's own", () =>
        {
            var fixtures = new Dictionary<Format, string>
            {
                { Format.OpenAIChat, "providers/openai_chat_parallel.json" },
                { Format.OpenAIResponses, "providers/openai_responses_parallel.json" },
                { Format.Anthropic, "providers/anthropic_parallel.json" },
                { Format.Gemini, "providers/gemini_parallel.json" },
            };
            foreach (var f in fixtures)
            {
                var response = Fixture(f.Value);
                var calls = Formats.ParseCalls(f.Key, response);
                using (var reg = ToolsFor(calls))
                {
                    var turn = reg.RunTurn(f.Key, response);
                    // The same as the parts done one by one: parse, execute, write.
                    Check(SameJson(turn, Formats.WriteResults(f.Key, reg.ExecuteJson(calls))), f.Key + ": run_turn differs from parse+execute+write");
                    foreach (var c in Arr(Json.Parse(calls)))
                        Check(turn.Contains("ran " + (string)Obj(c)["name"]), f.Key + ": no result of " + Obj(c)["name"]);
                    var whole = reg.RunTurn(f.Key, response, new ExecOptions { WholeTurn = true });
                    Check(Formats.CheckHistory(f.Key, whole).Ok, f.Key + ": the whole turn does not check clean");
                }
            }
        });

        Run("a provider's error body throws with its kind as structured details", () =>
        {
            var e = Throws<CapstanException>(() => Formats.ParseCalls(Format.Anthropic,
                "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}"), "an error body");
            Check(e.Status == "CAPSTAN_ERR_PROVIDER_ERROR" && e.ProviderKind == "rate_limit_error" && e.ProviderMessage == "slow down", e.Message);
            var s = Throws<CapstanException>(() => { using (var reg = new Registry()) reg.AddTool("t", "", "{\"properties\":{\"x\":{\"type\":7}}}", c => ""); }, "a bad schema");
            Check(s.Status == "CAPSTAN_ERR_INVALID_SCHEMA" && s.SchemaPointer == "/properties/x/type", "pointer: " + s.SchemaPointer);
        });

        Run("CheckHistory finds a call without a result and repairs it; describe has no history", () =>
        {
            var history = "[{\"role\":\"user\",\"content\":\"add\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{}\"}}]},{\"role\":\"user\",\"content\":\"well?\"}]";
            var check = Formats.CheckHistory(Format.OpenAIChat, history);
            Check(!check.Ok && string.Join(",", check.Kinds) == "missing_result" && check.RepairedJson == null, check.ReportJson);
            var fixedUp = Formats.CheckHistory(Format.OpenAIChat, history, repair: true);
            Check(Arr(Json.Parse(fixedUp.RepairedJson)).Count == 4, fixedUp.RepairedJson);
            Check(Formats.CheckHistory(Format.OpenAIChat, fixedUp.RepairedJson).Ok, "the repair checks clean");
            var e = Throws<CapstanException>(() => Formats.CheckHistory(Format.Describe, "[]"), "describe");
            Check(e.Status == "CAPSTAN_ERR_INVALID_ARGUMENT", e.Message);
        });

        Run("search finds tools by words or pattern; the search tool loads deferred tools until unloaded; strict and lowered exports", () =>
        {
            using (var reg = new Registry())
            {
                reg.AddTool("send_email", "Sends an email to a friend.", AnyArgs, c => "sent", ToolFlags.Deferred);
                reg.AddTool("get_weather", "Current weather in a city.", AnyArgs, c => "sunny");
                var found = Arr(Obj(Json.Parse(reg.SearchJson("emails")))["results"]);
                Check(found.Count >= 1 && (string)Obj(found[0])["name"] == "send_email", "words");
                var rx = Obj(Json.Parse(reg.SearchJson("^get_", regex: true)));
                Check((string)rx["mode"] == "regex" && (string)Obj(Arr(rx["results"])[0])["name"] == "get_weather", "regex");
                Check(!reg.ToolsJson(Format.OpenAIChat).Contains("send_email"), "deferred tools are hidden");
                reg.AddSearchTool();
                var r = reg.Execute("{\"name\":\"tool_search\",\"arguments\":{\"query\":\"email a friend\"}}");
                Check(r[0].Outcome == "ok" && r[0].Content.Contains("send_email"), r[0].Content);
                Check(reg.ToolsJson(Format.OpenAIChat).Contains("send_email"), "found, so exported");
                reg.UnloadTools();
                Check(!reg.ToolsJson(Format.OpenAIChat).Contains("send_email"), "unloaded");
                var e = Throws<CapstanException>(() => reg.SearchJson(""), "an empty query");
                Check(e.Status == "CAPSTAN_ERR_INVALID_ARGUMENT", e.Message);
                Check(reg.ToolsJson(Format.OpenAIChat, ExportFlags.Strict).Contains("\"strict\":true"), "strict export");
                Check(reg.ToolsJson(Format.Gemini).Contains("parametersJsonSchema"), "Gemini's JSON Schema field by default");
                var lowered = reg.ToolsJson(Format.Gemini, ExportFlags.GeminiLower);
                Check(lowered.Contains("\"parameters\"") && !lowered.Contains("parametersJsonSchema"), "lowered: " + lowered);
            }
        });

        Run("a stream in every format runs the response's calls, as the same response not streamed gives them", () =>
        {
            foreach (var f in new[] { Tuple.Create(Format.OpenAIChat, "openai_chat"), Tuple.Create(Format.OpenAIResponses, "openai_responses"),
                                      Tuple.Create(Format.Anthropic, "anthropic"), Tuple.Create(Format.Gemini, "gemini") })
            {
                var body = System.Text.Encoding.UTF8.GetBytes(Fixture("stream/" + f.Item2 + "/parallel.sse"));
                var calls = Formats.ParseCalls(f.Item1, Fixture("stream/" + f.Item2 + "/parallel.json"));
                using (var reg = ToolsFor(calls))
                using (var s = reg.OpenStream(f.Item1))
                {
                    // Split anywhere: 7 bytes at a time cuts lines, strings and characters.
                    for (int i = 0; i < body.Length; i += 7) s.Feed(body, i, Math.Min(7, body.Length - i));
                    var outcome = Obj(Json.Parse(s.Finish()));
                    Check(MethodTools.JsonValue(outcome["calls"]) == MethodTools.JsonValue(Json.Parse(calls)), f.Item2 + ": calls differ");
                    var results = Arr(outcome["results"]);
                    Check(results.Count == Arr(outcome["calls"]).Count && All(results, x => (string)Obj(x)["outcome"] == "ok"), f.Item2 + ": results");
                }
            }
        });

        Run("a stream passes the model's text on as it arrives", () =>
        {
            var body = Fixture("stream/anthropic/text_then_calls.sse");
            var calls = Formats.ParseCalls(Format.Anthropic, Fixture("stream/anthropic/text_then_calls.json"));
            var text = new System.Text.StringBuilder();
            using (var reg = ToolsFor(calls))
            using (var s = reg.OpenStream(Format.Anthropic, null, t => text.Append(t)))
            {
                s.Feed(body);
                var outcome = Obj(Json.Parse(s.Finish()));
                Check(text.Length > 0 && text.ToString() == (string)outcome["text"], "text: " + text);
            }
        });

        Run("with early dispatch a call starts before the response ends", () =>
        {
            var body = System.Text.Encoding.UTF8.GetBytes(Fixture("stream/openai_chat/parallel.sse"));
            var calls = Formats.ParseCalls(Format.OpenAIChat, Fixture("stream/openai_chat/parallel.json"));
            var first = new ManualResetEventSlim();
            using (var reg = ToolsFor(calls))
            using (var s = reg.OpenStream(Format.OpenAIChat, new ExecOptions { EarlyDispatch = true }, null, r => first.Set()))
            {
                int cut = System.Text.Encoding.ASCII.GetString(body).LastIndexOf("data: ", StringComparison.Ordinal);
                s.Feed(body, 0, cut);
                Check(first.Wait(60000), "no call finished before the response ended");
                s.Feed(body, cut, body.Length - cut);
                var results = Arr(Obj(Json.Parse(s.Finish()))["results"]);
                Check(results.Count == 3, "results: " + results.Count);
            }
        });

        Run("a stream's cut call never runs; an error event and a dropped body throw", () =>
        {
            var calls = Formats.ParseCalls(Format.OpenAIChat, Fixture("stream/openai_chat/parallel.json"));
            using (var reg = ToolsFor(calls))
            {
                using (var s = reg.OpenStream(Format.OpenAIChat))
                {
                    s.Feed(Fixture("stream/openai_chat/truncated.sse"));
                    var outcome = Obj(Json.Parse(s.Finish()));
                    Check(MethodTools.JsonValue(outcome["cut_calls"]) == "[1]", MethodTools.JsonValue(outcome["cut_calls"]));
                    Check((string)Obj(Arr(outcome["results"])[1])["outcome"] == "invalid_arguments", "the cut call's result");
                }
                using (var s = reg.OpenStream(Format.Anthropic))
                {
                    var e = Throws<CapstanException>(() => { s.Feed(Fixture("stream/anthropic/error.sse")); s.Finish(); }, "an error event");
                    Check(e.Status == "CAPSTAN_ERR_PROVIDER_ERROR" && e.ProviderKind == "overloaded_error", e.Message);
                }
                using (var s = reg.OpenStream(Format.OpenAIChat))
                {
                    s.Feed(Fixture("stream/openai_chat/dropped.sse"));
                    var e = Throws<CapstanException>(() => s.Finish(), "a dropped body");
                    Check(e.Status == "CAPSTAN_ERR_STREAM_TRUNCATED", e.Message);
                }
                var m = Throws<CapstanException>(() => reg.OpenStream(Format.Mcp), "MCP has no streams");
                Check(m.Status == "CAPSTAN_ERR_INVALID_ARGUMENT", m.Message);
            }
        });

        Run("a registry served over MCP HTTP mounts into another, its tools called like any", () =>
        {
            using (var served = Adder())
            using (var server = served.StartMcpServer())
            using (var reg = new Registry())
            {
                Check(server.Url.StartsWith("http://127.0.0.1:") && server.Url.EndsWith("/mcp"), server.Url);
                using (var mount = McpMount.Connect(reg, new McpMountOptions { Url = server.Url, Prefix = "remote_" }))
                {
                    var r = reg.Execute("[{\"name\":\"remote_add\",\"arguments\":{\"a\":2,\"b\":3}},{\"name\":\"remote_add\",\"arguments\":{\"a\":\"x\"}}]");
                    Check(r[0].Outcome == "ok" && r[0].Content == "5", r[0].Content);
                    Check(r[1].Outcome == "invalid_arguments", "validated locally: " + r[1].Outcome);
                    var info = Obj(Json.Parse(mount.InfoJson()));
                    Check((bool)info["connected"] && (string)Obj(info["tools"])["remote_add"] == "add", mount.InfoJson());
                }
                Check(!reg.NamesJson().Contains("remote_add"), "unmounted: " + reg.NamesJson());
                Check(server.Stop(), "stop");
            }
        });

        Run("a registry served on stdio by a child process mounts by its command line", () =>
        {
            string exe = System.Reflection.Assembly.GetEntryAssembly().Location;
            var argv = new List<string> { Environment.GetEnvironmentVariable("CAPSTAN_TEST_MONO") ?? "mono" };
            if (Environment.GetEnvironmentVariable("CAPSTAN_TEST_AOT") == "1") argv.Add("--full-aot");
            argv.Add(exe);
            argv.Add("--serve-stdio");
            using (var reg = new Registry())
            using (var mount = McpMount.Connect(reg, new McpMountOptions { Command = argv.ToArray(), ConnectTimeoutMs = 60000 }))
            {
                var r = reg.Execute("{\"name\":\"add\",\"arguments\":{\"a\":40,\"b\":2}}");
                Check(r[0].Outcome == "ok" && r[0].Content == "42", r[0].Outcome + ": " + r[0].Content);
                Check(((string)Obj(Obj(Json.Parse(mount.InfoJson()))["server"])["name"]) == "csharp-stdio", mount.InfoJson());
            }
            using (var reg = new Registry())
            {
                var e = Throws<CapstanException>(() => McpMount.Connect(reg, new McpMountOptions { Command = new[] { "/nonexistent/capstan-server" } }), "a missing command");
                Check(e.Status.StartsWith("CAPSTAN_ERR_MCP") || e.Status == "CAPSTAN_ERR_TRANSPORT", e.Message);
                Throws<ArgumentException>(() => McpMount.Connect(reg, new McpMountOptions()), "neither command nor url");
            }
        });

        Run("bad input is refused with a clear error, not a crash", () =>
        {
            using (var reg = Adder())
            {
                Throws<ArgumentNullException>(() => reg.Execute(null), "null calls");
                Throws<ArgumentException>(() => reg.Execute("{\"name\":\"add\"}", new ExecOptions { ApprovedIds = new string[] { null } }), "a null id");
                var e = Throws<CapstanException>(() => reg.Submit("not json"), "calls that are not JSON");
                Check(e.Status == "CAPSTAN_ERR_INVALID_CALLS", e.Message);
            }
        });

        Run("a tool returns content parts (an image) that each format renders, and bad parts are a tool error", () =>
        {
            var png = Convert.FromBase64String("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=");
            using (var reg = new Registry())
            {
                reg.AddTool("look", "", null, c => ToolOutput.Image(png, "image/png", "the view from the tower"));
                reg.AddTool("bad", "", null, c => ToolOutput.Parts("[{\"type\":\"image\",\"data\":\"%%%\",\"mimeType\":\"image/png\"}]"));
                reg.AddTool("stats", "", null, c => ToolOutput.Json("{\"hp\":3}"));
                var r = reg.Execute("[{\"name\":\"look\"},{\"name\":\"bad\"},{\"name\":\"stats\"}]");
                Check(r[0].Outcome == "ok" && r[0].Content.Contains("the view from the tower") && r[0].Content.Contains("[image: image/png"), r[0].Content);
                Check(r[0].PartsJson != null && (string)Obj(Arr(Json.Parse(r[0].PartsJson))[1])["type"] == "image", "parts: " + r[0].PartsJson);
                Check(r[1].Outcome == "tool_error", r[1].Outcome + ": " + r[1].Content);
                Check(r[2].Outcome == "ok" && SameJson(r[2].Content, "{\"hp\":3}"), r[2].Content);
                var turn = reg.RunTurn(Format.Anthropic, "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"look\",\"input\":{}}],\"stop_reason\":\"tool_use\"}");
                Check(turn.Contains("\"type\":\"image\"") && turn.Contains("\"media_type\":\"image/png\""), turn);
            }
        });

        Run("MCP metadata given with a tool reaches the MCP export, and bad metadata is refused", () =>
        {
            using (var reg = new Registry())
            {
                reg.AddTool("peek", "Looks.", null, c => ToolOutput.Text("seen"), ToolFlags.None, 0,
                    "{\"title\":\"Peek around\",\"annotations\":{\"readOnlyHint\":true}}");
                var mcp = reg.ToolsJson(Format.Mcp);
                Check(mcp.Contains("Peek around") && mcp.Contains("readOnlyHint"), mcp);
                var e = Throws<CapstanException>(() => reg.AddTool("peek2", "", null, c => ToolOutput.Text(""), ToolFlags.None, 0, "{\"title\":5}"), "a title that is not text");
                Check(e.Status == "CAPSTAN_ERR_INVALID_ARGUMENT", e.Message);
            }
        });

        Run("the runtime's thread cap holds, and shutdown joins capstan's threads, which start again when needed", () =>
        {
            CapstanRuntime.Configure(threads: 1);
            try
            {
                using (var reg = new Registry())
                {
                    int running = 0, most = 0;
                    reg.AddTool("wait", "", null, c =>
                    {
                        int now = Interlocked.Increment(ref running);
                        lock (reg) most = Math.Max(most, now);
                        Thread.Sleep(50);
                        Interlocked.Decrement(ref running);
                        return "done";
                    });
                    var r = reg.Execute("[{\"name\":\"wait\"},{\"name\":\"wait\"},{\"name\":\"wait\"},{\"name\":\"wait\"}]");
                    Check(r[3].Content == "done", "ran");
                    // One pool thread, and the calling thread that runs calls while it waits.
                    Check(most <= 2, "at most " + most + " ran at once with a cap of 1");
                }
            }
            finally
            {
                CapstanRuntime.Configure();
            }
            Check(CapstanRuntime.Shutdown(60000), "shutdown: " + CapstanRuntime.LastShutdownProblem);
            using (var reg = Adder())
                Check(reg.Execute("{\"name\":\"add\",\"arguments\":{\"a\":1}}")[0].Content == "2", "after shutdown");
        });

        Run("every handle the binding gave native code is released once its owner is gone", () =>
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Check(Capstan.Callbacks.Live == 0, "still held: " + Capstan.Callbacks.Live);
        });
    }
}
