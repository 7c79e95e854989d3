// The README's durable calls through the host's own store, run by `make
// csharp-test` under full AOT: the journal kept in the host's database (here
// a dictionary standing in for a table keyed by run and call); the second
// registry, as a process started again, answers the call from it.
using System;
using System.Collections.Generic;
using Capstan;

// One row per (run, call): a completed record replaces its started one.
public sealed class CallTable : IJournalStore
{
    private readonly Dictionary<string, string> rows = new Dictionary<string, string>();

    public void Record(string recordJson)
    {
        var r = (Dictionary<string, object>)Json.Parse(recordJson);
        if ((string)r["kind"] == "tools") return;                   // the tool list: never looked up
        lock (rows) rows[r["run"] + "\n" + r["call"]] = recordJson;  // an upsert, committed before returning
    }

    public string Lookup(string runId, string callId)
    {
        string found;
        lock (rows) return rows.TryGetValue(runId + "\n" + callId, out found) ? found : null;
    }
}

internal static class HostJournal
{
    private static int Main()
    {
        var table = new CallTable();
        int charged = 0;
        for (int process = 0; process < 2; process++)
        {
            using (var journal = Journal.Custom(table))
            using (var reg = new Registry())
            {
                reg.AddTool("charge", "Charges a card.", null, c => { charged++; return "charged"; });
                reg.SetJournal(journal);
                var r = reg.Execute("{\"id\":\"call_1\",\"name\":\"charge\"}", new ExecOptions { RunId = "order-7" });
                Console.WriteLine(r[0].Content + ", the tool ran " + charged + " time(s)");
            }
        }
        return charged == 1 ? 0 : 1;
    }
}
