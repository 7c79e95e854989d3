// A journal kept by the host (Journal.Custom over IJournalStore, issue 47
// item 3): what the store sees, a second registry answered from it, a
// crash's `started` without `completed`, a store that throws, who keeps the
// store alive, replay mode, and the threads the store is called on.
using System;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using Capstan;

internal static partial class Tests
{
    /// <summary>Where <paramref name="count"/> threads wait for each other
    /// (System.Threading.Barrier is in System.dll, which the full-AOT run
    /// does not compile); false if the others did not come within a minute.</summary>
    private sealed class Meeting
    {
        private readonly int count;
        private int arrived;
        private readonly ManualResetEventSlim all = new ManualResetEventSlim();

        internal Meeting(int count)
        {
            this.count = count;
        }

        internal bool Arrive()
        {
            if (Interlocked.Increment(ref arrived) == count) all.Set();
            return all.Wait(TimeSpan.FromSeconds(60));
        }
    }

    /// <summary>The test's store: every record it was given, in order, and
    /// per (run, call) key the latest <c>started</c> or <c>completed</c>.</summary>
    private sealed class MemoryStore : IJournalStore
    {
        internal readonly List<string> Seen = new List<string>();
        internal readonly List<int> SeenOn = new List<int>();
        private readonly Dictionary<string, string> byKey = new Dictionary<string, string>();
        internal Func<string, bool> FailRecord;
        internal bool FailLookup;
        internal string Answer;
        internal Meeting CompletedTogether;

        public void Record(string recordJson)
        {
            if (CompletedTogether != null && Kind(recordJson) == "completed" &&
                !CompletedTogether.Arrive())
                throw new InvalidOperationException("the other completed record never came while this one was stored");
            lock (this)
            {
                if (FailRecord != null && FailRecord(recordJson)) throw new IOException("the disk is full");
                Seen.Add(recordJson);
                SeenOn.Add(Thread.CurrentThread.ManagedThreadId);
                var kind = Kind(recordJson);
                if (kind == "started" || kind == "completed") byKey[Key(recordJson)] = recordJson;
            }
        }

        public string Lookup(string runId, string callId)
        {
            lock (this)
            {
                if (FailLookup) throw new IOException("the database is down");
                if (Answer != null) return Answer;
                string found;
                return byKey.TryGetValue(runId + "\n" + callId, out found) ? found : null;
            }
        }

        internal List<string> Of(string kind)
        {
            lock (this) return Seen.FindAll(r => Kind(r) == kind);
        }

        internal static string Kind(string json)
        {
            return (string)((Dictionary<string, object>)Json.Parse(json))["kind"];
        }

        private static string Key(string json)
        {
            var r = (Dictionary<string, object>)Json.Parse(json);
            return r["run"] + "\n" + r["call"];
        }
    }

    /// <summary>Runs <see cref="DurableCalls"/> under <paramref name="run"/>
    /// on a new registry using a new journal over <paramref name="store"/>.</summary>
    private static ToolResult[] RunWith(MemoryStore store, Dictionary<string, int> runs, string run, bool replay = false,
        string calls = null)
    {
        using (var journal = Journal.Custom(store))
        using (var reg = DurableTools(runs, null))
        {
            reg.SetJournal(journal, replay);
            return reg.Execute(calls ?? DurableCalls, new ExecOptions { RunId = run });
        }
    }

    private static int Runs(Dictionary<string, int> runs, string tool)
    {
        lock (runs) return runs.ContainsKey(tool) ? runs[tool] : 0;
    }

    /// <summary>Waits (bounded) for capstan to let go of stores: a destroy may
    /// run on the capstan thread that dropped the last reference.</summary>
    private static void AwaitStoresReleased(int count)
    {
        for (int i = 0; i < 600 && Volatile.Read(ref Journal.StoresReleased) < count; i++) Thread.Sleep(50);
        Check(Journal.StoresReleased == count, "stores released: " + Journal.StoresReleased + ", want " + count);
    }

    private static void HostJournal()
    {
        Run("journal: a host's own store sees a started then a completed per call, and a second registry with it answers them without running a tool", () =>
        {
            int handles = Capstan.Callbacks.Live, released = Journal.StoresReleased;
            var store = new MemoryStore();
            var runs = new Dictionary<string, int>();
            var first = RunWith(store, runs, "run-1");
            Check(first[0].Content == "charge done" && first[1].Content == "send_mail done" && first[2].Content == "read_balance done",
                "first run: " + first[0].Content);
            foreach (var call in new[] { "c1", "c2", "c3" })
            {
                var mine = store.Seen.FindAll(r => r.Contains("\"call\":\"" + call + "\"") && MemoryStore.Kind(r) != "tools");
                Check(mine.Count == 2 && MemoryStore.Kind(mine[0]) == "started" && MemoryStore.Kind(mine[1]) == "completed",
                    call + ": " + string.Join(" | ", mine));
                Check(mine[0].Contains("\"run\":\"run-1\"") && mine[1].Contains("done\""), mine[1]);
            }
            int recorded = store.Seen.Count;

            var events = new List<ToolEvent>();
            using (var journal = Journal.Custom(store))
            using (var reg = DurableTools(runs, null))
            {
                reg.SetJournal(journal);
                reg.SetEventHook(e => { lock (events) events.Add(e); });
                var again = reg.Execute(DurableCalls, new ExecOptions { RunId = "run-1" });
                for (int i = 0; i < 3; i++)
                    Check(again[i].Outcome == "ok" && again[i].Content == first[i].Content, "replayed: " + again[i].Content);
                Check(Runs(runs, "charge") == 1 && Runs(runs, "send_mail") == 1 && Runs(runs, "read_balance") == 1, "a tool ran again");
                var stats = reg.StatsJson();
                Check(stats.Split(new[] { "\"replayed\":1" }, StringSplitOptions.None).Length == 4, stats);
                lock (events) Check(events.FindAll(e => e.Kind == EventKind.Replayed).Count == 3, "replayed events");
                // Another run id is another key: the tool runs.
                reg.Execute("{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}", new ExecOptions { RunId = "run-2" });
                Check(Runs(runs, "charge") == 2, "run-2 is not run-1");
            }
            Check(store.Of("started").Count == 4 && store.Of("completed").Count == 4,
                "records after the replay: " + (store.Seen.Count - recorded) + " new");
            AwaitStoresReleased(released + 2);
            Check(Capstan.Callbacks.Live == handles, "handles held: " + (Capstan.Callbacks.Live - handles));
        });

        Run("journal: a call the host's store holds as started but not completed fails \"Outcome unknown:\", an idempotent one runs again", () =>
        {
            var done = new MemoryStore();
            var runs = new Dictionary<string, int>();
            RunWith(done, runs, "run-c");
            // A crash between the two records: the store holds what capstan wrote first, and no more.
            var crashed = new MemoryStore();
            foreach (var r in done.Of("started")) crashed.Record(r);
            var after = RunWith(crashed, runs, "run-c");
            Check(after[0].IsError && after[0].Content.StartsWith("Outcome unknown:") && Runs(runs, "charge") == 1, "c1: " + after[0].Content);
            Check(after[1].IsError && after[1].Content.StartsWith("Outcome unknown:") && Runs(runs, "send_mail") == 1, "c2: " + after[1].Content);
            Check(after[2].Outcome == "ok" && after[2].Content == "read_balance done" && Runs(runs, "read_balance") == 2, "c3: " + after[2].Content);
            var c3 = crashed.Lookup("run-c", "c3");
            Check(c3 != null && MemoryStore.Kind(c3) == "completed", "c3 is completed now: " + c3);
        });

        Run("journal: a host store that throws fails the call naming it, the tool not run for a failed started; the exception goes to Hooks.UnhandledException", () =>
        {
            int handles = Capstan.Callbacks.Live;
            var thrown = new List<Exception>();
            Action<Exception> seen = e => { lock (thrown) thrown.Add(e); };
            Hooks.UnhandledException += seen;
            try
            {
                var store = new MemoryStore { FailRecord = j => MemoryStore.Kind(j) == "started" };
                var runs = new Dictionary<string, int>();
                var lone = RunWith(store, runs, "run-f", calls: "{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}");
                Check(lone[0].IsError && lone[0].Content.Contains("could not record the start of call \"c1\"") &&
                    lone[0].Content.Contains("the host's record returned 1") && lone[0].Content.Contains("The tool was not run"), lone[0].Content);
                var batch = RunWith(store, runs, "run-f");
                foreach (var r in batch) Check(r.IsError && r.Content.Contains("the host's record returned 1"), r.Id + ": " + r.Content);
                Check(runs.Count == 0, "a tool ran without its start recorded");
                lock (thrown) Check(thrown.Count >= 2 && thrown.TrueForAll(e => e is IOException && e.Message == "the disk is full"),
                    "unhandled: " + thrown.Count);

                // A completed record that fails: the tool ran, its result is handed
                // over, and a later run finds the call's outcome unknown.
                store.FailRecord = j => MemoryStore.Kind(j) == "completed";
                var ran = RunWith(store, runs, "run-g", calls: "{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}");
                Check(ran[0].Outcome == "ok" && ran[0].Content == "charge done" && Runs(runs, "charge") == 1, ran[0].Content);
                store.FailRecord = null;
                var later = RunWith(store, runs, "run-g", calls: "{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}");
                Check(later[0].Content.StartsWith("Outcome unknown:") && Runs(runs, "charge") == 1, later[0].Content);

                lock (thrown) thrown.Clear();
                store.FailLookup = true;
                foreach (var calls in new[] { "{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}", DurableCalls })
                {
                    foreach (var r in RunWith(store, runs, "run-h", calls: calls))
                        Check(r.IsError && r.Content.Contains("the host's lookup returned 1") && r.Content.Contains("The tool was not run"),
                            r.Id + ": " + r.Content);
                }
                Check(Runs(runs, "charge") == 1 && runs.Count == 1, "a tool ran without its lookup");
                lock (thrown) Check(thrown.Count >= 2 && thrown[0].Message == "the database is down", "unhandled: " + thrown.Count);

                // Text that is not a record: the call fails saying what is wrong with it.
                store.FailLookup = false;
                store.Answer = "{\"kind\":\"finished\"}";
                var bad = RunWith(store, runs, "run-i", calls: "{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}");
                Check(bad[0].IsError && bad[0].Content.Contains("the host's lookup answered: not a journal record") &&
                    Runs(runs, "charge") == 1, bad[0].Content);
            }
            finally
            {
                Hooks.UnhandledException -= seen;
            }
            Check(Capstan.Callbacks.Live == handles, "handles held: " + (Capstan.Callbacks.Live - handles));
        });

        Run("journal: a host store stays alive while a registry uses its journal, disposed first or last, and is let go exactly once when both are gone", () =>
        {
            int handles = Capstan.Callbacks.Live, released = Journal.StoresReleased;
            var runs = new Dictionary<string, int>();
            var store = new MemoryStore();
            var a = DurableTools(runs, null);
            var b = DurableTools(runs, null);
            int tools = Capstan.Callbacks.Live;
            var journal = Journal.Custom(store);
            a.SetJournal(journal);
            b.SetJournal(journal);
            journal.Dispose();
            journal.Dispose();
            Check(Capstan.Callbacks.Live == tools + 1, "handles: " + (Capstan.Callbacks.Live - tools));
            try
            {
                a.SetJournal(journal);
                Check(false, "a disposed journal was taken");
            }
            catch (ObjectDisposedException)
            {
            }
            GC.Collect();
            GC.WaitForPendingFinalizers();
            var one = "{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}";
            Check(a.Execute(one, new ExecOptions { RunId = "life" })[0].Content == "charge done", "a after the journal's Dispose");
            a.Dispose();
            Check(Journal.StoresReleased == released, "let go while registry b uses it");
            var r = b.Execute(one, new ExecOptions { RunId = "life" })[0];
            Check(r.Content == "charge done" && Runs(runs, "charge") == 1, "b answered from the store a wrote: " + r.Content);
            b.Dispose();
            AwaitStoresReleased(released + 1);

            // The other order: the registry goes first, the journal keeps the store.
            using (var reg = DurableTools(runs, null))
            {
                journal = Journal.Custom(store);
                reg.SetJournal(journal);
                reg.SetJournal(null);
            }
            Check(Journal.StoresReleased == released + 1, "let go while its journal lives");
            journal.Dispose();
            AwaitStoresReleased(released + 2);
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Check(Journal.StoresReleased == released + 2, "a store let go twice");
            Check(Capstan.Callbacks.Live == handles, "handles held: " + (Capstan.Callbacks.Live - handles));
            try
            {
                Journal.Custom(null);
                Check(false, "a null store was taken");
            }
            catch (ArgumentNullException e)
            {
                Check(e.Message.Contains("Journal.Custom needs a store"), e.Message);
            }
        });

        Run("journal: replay mode with a host store runs no tool and writes nothing; a call missing from it fails", () =>
        {
            var store = new MemoryStore();
            var runs = new Dictionary<string, int>();
            var recorded = RunWith(store, runs, "run-r");
            int records = store.Seen.Count;
            var calls = DurableCalls.Substring(0, DurableCalls.Length - 1) + ",{\"id\":\"c9\",\"name\":\"charge\",\"arguments\":{\"amount\":1}}]";
            var r = RunWith(store, runs, "run-r", replay: true, calls: calls);
            for (int i = 0; i < 3; i++) Check(r[i].Outcome == "ok" && r[i].Content == recorded[i].Content, r[i].Id + ": " + r[i].Content);
            Check(r[3].IsError && r[3].Content.Contains("not in the recording"), r[3].Content);
            Check(Runs(runs, "charge") == 1 && Runs(runs, "send_mail") == 1 && Runs(runs, "read_balance") == 1, "replay ran a tool");
            Check(store.Seen.Count == records, "replay wrote " + (store.Seen.Count - records) + " records");
        });

        Run("journal: a host store is called on the threads running the calls, several at once, capstan's own among them", () =>
        {
            var together = new Meeting(2);
            var store = new MemoryStore { CompletedTogether = new Meeting(2) };
            var toolOn = new Dictionary<string, int>();
            using (var journal = Journal.Custom(store))
            using (var reg = new Registry())
            {
                reg.AddTool("meet", "Waits for the other call.", null, c =>
                {
                    lock (toolOn) toolOn[c.Id] = Thread.CurrentThread.ManagedThreadId;
                    if (!together.Arrive()) throw new InvalidOperationException("the other call never ran");
                    return "met";
                });
                reg.SetJournal(journal);
                var r = reg.Execute("[{\"id\":\"m1\",\"name\":\"meet\"},{\"id\":\"m2\",\"name\":\"meet\"}]",
                    new ExecOptions { RunId = "threads", Limit = 2 });
                Check(r[0].Content == "met" && r[1].Content == "met", r[0].Content + " " + r[1].Content);
                var on = new List<int>();
                lock (store)
                {
                    for (int i = 0; i < store.Seen.Count; i++)
                    {
                        if (MemoryStore.Kind(store.Seen[i]) != "completed") continue;
                        var id = store.Seen[i].Contains("\"call\":\"m1\"") ? "m1" : "m2";
                        Check(store.SeenOn[i] == toolOn[id], id + "'s completed record came on another thread than its tool");
                        on.Add(store.SeenOn[i]);
                    }
                }
                Check(on.Count == 2 && on[0] != on[1], "completed records on threads " + string.Join(",", on));
                Check(on.Exists(t => t != Thread.CurrentThread.ManagedThreadId), "no record came on a capstan thread");
            }
        });
    }
}
