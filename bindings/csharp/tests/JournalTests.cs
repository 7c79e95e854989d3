// The journal from C# (issue 47, docs/durable-calls.md): a child process
// killed between a call's `started` and `completed` records, then the same
// calls again with the same run id; replay mode; a corrupt file.
using System;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using Capstan;

internal static partial class Tests
{
    private const string ChargeSchema = "{\"type\":\"object\",\"properties\":{\"amount\":{\"type\":\"integer\"}}}";

    private const string DurableCalls = "[{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}," +
        "{\"id\":\"c2\",\"name\":\"send_mail\",\"arguments\":{\"to\":\"ada\"}}," +
        "{\"id\":\"c3\",\"name\":\"read_balance\",\"arguments\":{}}]";

    /// <summary>charge (completes at once, its amount 0 a tool error),
    /// send_mail (not idempotent) and read_balance (idempotent). With
    /// <paramref name="hangMarker"/> the last two write <c>marker.NAME</c>
    /// and never return: the process is killed while they run.</summary>
    private static Registry DurableTools(Dictionary<string, int> runs, string hangMarker)
    {
        var reg = new Registry();
        Func<string, Func<ToolCall, string>> tool = name => call =>
        {
            lock (runs) runs[name] = (runs.ContainsKey(name) ? runs[name] : 0) + 1;
            if (name == "charge" && (long)call.Arguments["amount"] == 0) throw new InvalidOperationException("nothing to charge");
            if (hangMarker != null && name != "charge")
            {
                File.WriteAllText(hangMarker + "." + name, "running");
                Thread.Sleep(Timeout.Infinite);
            }
            return name + " done";
        };
        reg.AddTool("charge", "Charges a card.", ChargeSchema, tool("charge"));
        reg.AddTool("send_mail", "Sends a mail.", null, tool("send_mail"));
        reg.AddTool("read_balance", "Reads the balance.", null, tool("read_balance"), ToolFlags.Idempotent);
        return reg;
    }

    /// <summary>The child process: runs <see cref="DurableCalls"/> under run
    /// <paramref name="runId"/> with the journal at <paramref name="path"/>, and hangs.</summary>
    private static int JournalChild(string path, string runId)
    {
        using (var journal = Journal.OpenJsonLines(path))
        using (var reg = DurableTools(new Dictionary<string, int>(), path))
        {
            reg.SetJournal(journal);
            reg.Execute(DurableCalls, new ExecOptions { RunId = runId });
        }
        return 3; // never reached: killed
    }

    private static void Durable()
    {
        Run("journal: after a crash between started and completed, the same run gives the completed call from the journal and the unknown ones their policy", () =>
        {
            var dir = Path.Combine(Path.GetTempPath(), "capstan-cs-journal-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            var path = Path.Combine(dir, "calls.jsonl");
            try
            {
                var mono = Environment.GetEnvironmentVariable("MONO") ?? "mono";
                var mode = Environment.GetEnvironmentVariable("CAPSTAN_TEST_AOT") == "1" ? "--full-aot" : "--debug";
                int pid = TestOs.Spawn("exec " + mono + " " + mode + " " + TestOs.Quote(typeof(Tests).Assembly.Location) +
                    " --journal-child " + TestOs.Quote(path) + " run-7");
                try
                {
                    TestOs.AwaitFile(path + ".send_mail", t => true);
                    TestOs.AwaitFile(path + ".read_balance", t => true);
                    TestOs.AwaitFile(path, t => t.Contains("\"kind\":\"completed\""));
                }
                finally
                {
                    TestOs.Kill(pid);
                }
                var recorded = File.ReadAllText(path);
                Check(recorded.Contains("\"call\":\"c2\"") && recorded.Contains("\"call\":\"c3\"") && !recorded.Contains("send_mail done"), recorded);

                var runs = new Dictionary<string, int>();
                var events = new List<ToolEvent>();
                using (var journal = Journal.OpenJsonLines(path))
                using (var reg = DurableTools(runs, null))
                {
                    reg.SetJournal(journal);
                    reg.SetEventHook(e => { lock (events) events.Add(e); });
                    var r = reg.Execute(DurableCalls, new ExecOptions { RunId = "run-7" });
                    Check(r[0].Outcome == "ok" && r[0].Content == "charge done" && !runs.ContainsKey("charge"), "c1: " + r[0].Content);
                    Check(r[1].IsError && r[1].Content.StartsWith("Outcome unknown:") && !runs.ContainsKey("send_mail"), "c2: " + r[1].Content);
                    Check(r[2].Outcome == "ok" && r[2].Content == "read_balance done" && runs["read_balance"] == 1, "c3: " + r[2].Content);
                    Check(events.Exists(e => e.Kind == EventKind.Replayed && e.Id == "c1"), "no replayed event for c1");
                    Check(reg.StatsJson().Contains("\"replayed\":1"), reg.StatsJson());

                    // A recorded tool error replays as that error; another run id is another key.
                    var err = "{\"id\":\"e1\",\"name\":\"charge\",\"arguments\":{\"amount\":0}}";
                    var first = reg.Execute(err, new ExecOptions { RunId = "run-8" })[0];
                    var again = reg.Execute(err, new ExecOptions { RunId = "run-8" })[0];
                    Check(first.Outcome == "tool_error" && again.Outcome == "tool_error" && again.Content == first.Content && runs["charge"] == 1, again.Content);
                    reg.Execute(err, new ExecOptions { RunId = "run-9" });
                    Check(runs["charge"] == 2, "run-9 is not run-8");
                    // Changed arguments under a recorded key: refused, naming what changed.
                    var changed = reg.Execute("{\"id\":\"e1\",\"name\":\"charge\",\"arguments\":{\"amount\":6}}", new ExecOptions { RunId = "run-8" })[0];
                    Check(changed.IsError && changed.Content.Contains("its arguments changed") && runs["charge"] == 2, changed.Content);
                    // Without a run id the journal is not used.
                    reg.Execute(err);
                    Check(runs["charge"] == 3, "ran " + runs["charge"]);
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        });

        Run("journal: replay mode runs no tool and fails a call missing from the recording; a corrupt file fails to open naming the line", () =>
        {
            var path = Path.GetTempFileName();
            try
            {
                var runs = new Dictionary<string, int>();
                using (var reg = DurableTools(runs, null))
                {
                    using (var journal = Journal.OpenJsonLines(path))
                    {
                        reg.SetJournal(journal);
                    }
                    // The registry keeps the journal it uses: disposed here, still recording.
                    var recorded = reg.Execute("{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}", new ExecOptions { RunId = "t" })[0];
                    Check(recorded.Outcome == "ok" && runs["charge"] == 1, recorded.Content);
                    reg.SetJournal(null);
                }
                using (var journal = Journal.OpenJsonLines(path))
                using (var reg = DurableTools(runs, null))
                {
                    reg.SetJournal(journal, replay: true);
                    var r = reg.Execute("[{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}},{\"id\":\"c9\",\"name\":\"charge\",\"arguments\":{\"amount\":1}}]",
                        new ExecOptions { RunId = "t" });
                    Check(r[0].Outcome == "ok" && r[0].Content == "charge done", r[0].Content);
                    Check(r[1].IsError && r[1].Content.Contains("not in the recording"), r[1].Content);
                    Check(runs["charge"] == 1, "replay ran a tool");
                }
                var disposed = Journal.OpenJsonLines(path);
                disposed.Dispose();
                using (var reg = new Registry())
                {
                    try
                    {
                        reg.SetJournal(disposed);
                        Check(false, "a disposed journal was taken");
                    }
                    catch (ObjectDisposedException)
                    {
                    }
                }
                File.WriteAllText(path, "\n{\"kind\":\"started\"}\n");
                try
                {
                    Journal.OpenJsonLines(path);
                    Check(false, "a corrupt journal opened");
                }
                catch (CapstanException e)
                {
                    Check(e.Status == "CAPSTAN_ERR_INVALID_ARGUMENT" && e.Message.Contains("record at line 2"), e.Message);
                }
                try
                {
                    Journal.OpenSqlite(path + ".db").Dispose();
                }
                catch (CapstanException e)
                {
                    // The default library has no SQLite (feature journal-sqlite): a clear refusal.
                    Check(e.Status == "CAPSTAN_ERR_UNSUPPORTED" && e.Message.Contains("journal-sqlite"), e.Message);
                }
            }
            finally
            {
                foreach (var f in new[] { path, path + ".db", path + ".db-wal", path + ".db-shm" }) File.Delete(f);
            }
        });
    }
}
