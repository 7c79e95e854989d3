// Quick tools (ToolFlags.Quick, CAPSTAN_TOOL_HOST_RUN) through capstan's
// host batches: their checked calls run on the thread calling Execute, the
// batch's other tools on capstan's pool (issue 46).
using System;
using System.Collections.Generic;
using System.Threading;
using Capstan;

public static class QuickTools
{
    [Tool("Adds two integers, at once.", Flags = ToolFlags.Quick)]
    public static long QuickAdd(long a, long b = 1)
    {
        return a + b;
    }

    [Tool("A point, as JSON.", Flags = ToolFlags.Quick)]
    public static Point QuickPoint(double x)
    {
        return new Point { X = x, Y = -x, Label = "p" };
    }
}

internal static partial class Tests
{
    private static void Quick()
    {
        Run("a quick tool runs on the calling thread with checked arguments, the others on the pool", () =>
        {
            using (var reg = new Registry())
            {
                int caller = Thread.CurrentThread.ManagedThreadId;
                var ranOn = new Dictionary<string, int>();
                reg.AddTool("quick_echo", "", AddSchema, c =>
                {
                    lock (ranOn) ranOn[c.Id] = Thread.CurrentThread.ManagedThreadId;
                    Check(!c.IsCancelled && c.Name == "quick_echo", "the quick call's view");
                    try
                    {
                        c.Progress(1);
                        return "progress worked";
                    }
                    catch (InvalidOperationException e)
                    {
                        return c.ArgumentsJson + " " + c.Arguments["b"] + " " + e.Message.Contains("a quick tool's call has no progress");
                    }
                }, ToolFlags.Quick);
                reg.AddTool("slow", "", null, c =>
                {
                    lock (ranOn) ranOn[c.Id] = Thread.CurrentThread.ManagedThreadId;
                    return "slow";
                });
                reg.AddTools(typeof(QuickTools));
                var r = reg.Execute("[{\"id\":\"q1\",\"name\":\"quick_echo\",\"arguments\":{\"a\":1}},{\"id\":\"s\",\"name\":\"slow\"}," +
                    "{\"id\":\"q2\",\"name\":\"quick_echo\",\"arguments\":{\"b\":2}},{\"id\":\"q3\",\"name\":\"quick_add\",\"arguments\":{\"a\":40}}," +
                    "{\"id\":\"q4\",\"name\":\"quick_point\",\"arguments\":{\"x\":1.5}},{\"id\":\"q5\",\"name\":\"nope\"}]");
                Check(r.Length == 6, "results: " + r.Length);
                Check(r[0].Outcome == "ok" && r[0].Content == "{\"a\":1,\"b\":1} 1 True", r[0].Content);
                Check(r[1].Content == "slow", r[1].Content);
                Check(r[2].Outcome == "invalid_arguments", "unchecked arguments reached the tool: " + r[2].Content);
                Check(r[3].Content == "41", r[3].Content);
                Check(r[4].Content == "{\"X\":1.5,\"Y\":-1.5,\"Label\":\"p\"}", r[4].Content);
                Check(r[5].Outcome == "unknown_tool", r[5].Outcome);
                Check(ranOn["q1"] == caller && !ranOn.ContainsKey("q2"), "the quick call ran on " + ranOn["q1"] + ", the caller is " + caller);
                Check(ranOn["s"] != caller, "the slow tool ran on the calling thread");

                // Elsewhere a quick tool runs as any tool: its call has progress.
                var submitted = reg.ExecuteAsync("{\"id\":\"x\",\"name\":\"quick_echo\",\"arguments\":{\"a\":1}}").Result;
                Check(submitted[0].Content == "progress worked", submitted[0].Content);
            }
        });

        Run("a quick tool's exception is a tool error, text stays text, JSON stays JSON and bad JSON is a tool error; a task-returning tool cannot be quick", () =>
        {
            using (var reg = new Registry())
            {
                reg.AddTool("boom", "", null, c => { throw new InvalidOperationException("disk full"); }, ToolFlags.Quick);
                reg.AddTool("text", "", null, c => ToolOutput.Text("{not json"), ToolFlags.Quick);
                reg.AddTool("json", "", null, c => ToolOutput.Json("{\"ok\":true}"), ToolFlags.Quick);
                reg.AddTool("bad_json", "", null, c => ToolOutput.Json("{\"ok\":"), ToolFlags.Quick);
                reg.AddTool("asks", "", null, c => { throw new InputRequiredException(AskName); }, ToolFlags.Quick);
                var r = reg.Execute("[{\"name\":\"boom\"},{\"name\":\"text\"},{\"name\":\"json\"},{\"name\":\"bad_json\"},{\"name\":\"asks\"}]");
                Check(r[0].Outcome == "tool_error" && r[0].Content == "InvalidOperationException: disk full", r[0].Content);
                Check(r[1].Outcome == "ok" && r[1].Content == "{not json", r[1].Content);
                Check(r[2].Outcome == "ok" && r[2].Content == "{\"ok\":true}", r[2].Content);
                Check(r[3].Outcome == "tool_error" && r[3].Content.StartsWith("the tool's content is not JSON"), r[3].Content);
                Check(r[4].Outcome == "tool_error" && r[4].Content.Contains("which its caller cannot give: a quick tool's caller cannot be asked"), r[4].Content);
                try
                {
                    reg.AddAsyncTool("later", "", null, c => System.Threading.Tasks.Task.FromResult("x"), ToolFlags.Quick);
                    Check(false, "a task-returning quick tool was taken");
                }
                catch (ArgumentException e)
                {
                    Check(e.Message.Contains("a task-returning tool cannot be ToolFlags.Quick"), e.Message);
                }
                // Registered again without the flag, the tool runs as a callback.
                reg.AddTool("quick_again", "", null, c => { Thread.Sleep(1); return c.IsCancelled ? "?" : "callback"; }, ToolFlags.Quick);
                reg.RemoveTool("quick_again");
                reg.AddTool("quick_again", "", null, c => { c.Log(LogLevel.Info, "a callback's call logs"); return "callback"; });
                Check(reg.Execute("{\"name\":\"quick_again\"}")[0].Content == "callback", "no longer quick");
            }
        });
    }
}
