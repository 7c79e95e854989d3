using System;
using System.Collections.Generic;
using System.Text;

namespace Capstan
{
    /// <summary>Thrown by a tool (or ending its task) to ask its caller for
    /// input instead of answering (MCP 2026-07-28 multi round-trip requests,
    /// <c>capstan_call_require_input</c>). <c>requestsJson</c>: a JSON object
    /// of requests by key (at most 32), each
    /// <c>{"method": "elicitation/create" | "sampling/createMessage" | "roots/list", "params": {...}}</c>;
    /// <c>state</c>: the tool's own text (at most 64 KiB), back in the next
    /// round's <see cref="ToolCall.InputJson"/> as <c>requestState</c>, sealed
    /// by capstan on the way. Only an MCP client calling a served tool can be
    /// asked, and only for what it declared (<c>canAsk</c>); for any other
    /// caller the call ends as a tool error saying why. Not a
    /// <see cref="CapstanException"/>: it is the tool's answer, not a failure.</summary>
    public class InputRequiredException : Exception
    {
        public InputRequiredException(string requestsJson, string state = null)
            : base(Describe(requestsJson))
        {
            RequestsJson = requestsJson;
            State = state;
        }

        /// <summary>The requests by key, JSON text of an object.</summary>
        public string RequestsJson { get; private set; }

        /// <summary>The tool's state for the next round, or null.</summary>
        public string State { get; private set; }

        private static string Describe(string requestsJson)
        {
            if (requestsJson == null) throw new ArgumentNullException("requestsJson");
            var asked = new List<string>();
            try
            {
                var requests = Json.Parse(requestsJson) as Dictionary<string, object>;
                if (requests != null)
                {
                    foreach (var kv in requests)
                    {
                        var r = kv.Value as Dictionary<string, object>;
                        object m = null;
                        if (r != null) r.TryGetValue("method", out m);
                        asked.Add(kv.Key + " (" + (m as string ?? "?") + ")");
                    }
                }
            }
            catch (FormatException)
            {
                // capstan names what is wrong with them when the tool asks.
            }
            return "the tool asked for input (" + (asked.Count == 0 ? "another round" : string.Join(", ", asked.ToArray())) +
                "), which its caller cannot give";
        }

        /// <summary>Completes <paramref name="call"/> asking for input; null
        /// when done, else why capstan refused (the call is still open).</summary>
        internal string Ask(IntPtr call)
        {
            var r = Text.Bytes(RequestsJson);
            var s = State == null ? null : Text.Bytes(State);
            int status = Native.capstan_call_require_input(call, r, (UIntPtr)r.Length, s, (UIntPtr)(s == null ? 0 : s.Length));
            if (status == Native.Ok) return null;
            var name = Text.FromNts(Native.capstan_status_name(status));
            // Nothing waits for the call any more.
            if (name == "CAPSTAN_ERR_ALREADY_COMPLETED" || name == "CAPSTAN_ERR_STALE_HANDLE") return null;
            return CapstanException.LastMessage();
        }
    }
}
