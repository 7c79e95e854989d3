using System;
using System.Runtime.InteropServices;

namespace Capstan
{
    /// <summary>One call of a tool, as the tool sees it.</summary>
    public sealed class ToolCall
    {
        internal ToolCall(string argumentsJson, IntPtr handle)
        {
            ArgumentsJson = argumentsJson;
            this.handle = handle;
        }

        /// <summary>A quick tool's call (<see cref="ToolFlags.Quick"/>), run by the
        /// binding from a host batch: no capstan_call behind it.</summary>
        internal ToolCall(string argumentsJson, object parsedArguments, string id, string name)
        {
            ArgumentsJson = argumentsJson;
            parsed = parsedArguments;
            this.id = id;
            this.name = name;
            quick = true;
        }

        private readonly IntPtr handle;
        private readonly bool quick;
        private object parsed;
        private string id, name, input;

        private void NotQuick(string what)
        {
            if (quick) throw new InvalidOperationException("a quick tool's call has no " + what + " (ToolFlags.Quick)");
        }

        /// <summary>The model's call id (read from capstan on first use: read it
        /// before the call completes).</summary>
        public string Id
        {
            get
            {
                if (id == null)
                {
                    UIntPtr n;
                    id = Text.FromUtf8(Native.capstan_call_id(handle, out n), (int)(ulong)n);
                }
                return id;
            }
        }

        /// <summary>The tool's name (as <see cref="Id"/>, read on first use).</summary>
        public string Name
        {
            get
            {
                if (name == null)
                {
                    UIntPtr n;
                    name = Text.FromUtf8(Native.capstan_call_tool(handle, out n), (int)(ulong)n);
                }
                return name;
            }
        }

        /// <summary>The validated arguments (defaults filled in), JSON text of an object.</summary>
        public string ArgumentsJson { get; private set; }

        /// <summary>The validated arguments, parsed: string keys to
        /// <c>string</c>, <c>long</c> (integers) or <c>double</c>, <c>bool</c>, <c>null</c>,
        /// <c>List&lt;object&gt;</c> and <c>Dictionary&lt;string, object&gt;</c>.</summary>
        public System.Collections.Generic.Dictionary<string, object> Arguments
        {
            get
            {
                // A quick call's arguments were parsed with the batch: the first reader gets them.
                var p = parsed;
                parsed = null;
                return (System.Collections.Generic.Dictionary<string, object>)(p ?? Json.Parse(ArgumentsJson));
            }
        }

        /// <summary>What the caller gave besides the arguments and what it can
        /// be asked, JSON text of an object: <c>canAsk</c> (the methods an
        /// <see cref="InputRequiredException"/> may ask for: empty unless an MCP
        /// client calls a served tool) and, in a later round,
        /// <c>inputResponses</c> (the client's answers by key, as it sent them:
        /// check them) and <c>requestState</c> (the tool's own state, checked
        /// untampered). Read it before the call completes.</summary>
        public string InputJson
        {
            get
            {
                // Nobody can be asked for a quick call's input.
                if (quick) return "{\"canAsk\":[]}";
                if (input == null)
                {
                    UIntPtr n;
                    input = Text.FromUtf8(Native.capstan_call_input(handle, out n), (int)(ulong)n);
                }
                return input;
            }
        }

        /// <summary><see cref="InputJson"/>, parsed.</summary>
        public System.Collections.Generic.Dictionary<string, object> Input
        {
            get { return InputJson == null ? null : (System.Collections.Generic.Dictionary<string, object>)Json.Parse(InputJson); }
        }

        /// <summary>Reports progress (reaches the event hook as
        /// <see cref="EventKind.Progress"/>, and an MCP client that asked for it).
        /// <paramref name="total"/> 0 = unknown. Throws <see cref="CapstanException"/>
        /// for a value that does not grow, or once the call has its result.</summary>
        public void Progress(double progress, double total = 0, string message = null)
        {
            NotQuick("progress");
            var b = message == null ? null : Text.Bytes(message);
            CapstanException.Check(Native.capstan_call_progress(handle, progress, total, b, (UIntPtr)(b == null ? 0 : b.Length)));
        }

        /// <summary>Sends a log message (the event hook's <see cref="EventKind.Log"/>;
        /// an MCP client's <c>notifications/message</c>).</summary>
        public void Log(LogLevel level, string message)
        {
            if (message == null) throw new ArgumentNullException("message");
            NotQuick("log");
            var b = Text.Bytes(message);
            CapstanException.Check(Native.capstan_call_log(handle, (uint)level, b, (UIntPtr)b.Length));
        }

        /// <summary>True once the call timed out, was cancelled or its registry closed
        /// (a tool that is still running should stop). Valid until the call completes.</summary>
        public bool IsCancelled
        {
            get { return !quick && Native.capstan_call_cancelled(handle); }
        }
    }

    /// <summary>The one result of a call.</summary>
    public sealed class ToolResult
    {
        /// <summary>The call's id.</summary>
        public string Id { get; internal set; }
        /// <summary>The tool's name.</summary>
        public string Name { get; internal set; }
        /// <summary>What the model reads.</summary>
        public string Content { get; internal set; }
        /// <summary>How the call ended: <c>ok</c>, <c>tool_error</c>,
        /// <c>invalid_arguments</c>, <c>unknown_tool</c>, <c>timeout</c>,
        /// <c>cancelled</c>, <c>denied</c>.</summary>
        public string Outcome { get; internal set; }
        /// <summary>True for every outcome but <c>ok</c>.</summary>
        public bool IsError { get; internal set; }
        /// <summary>The call's position in its batch or response.</summary>
        public int Index { get; internal set; }
        /// <summary>How long the tool ran, in microseconds.</summary>
        public long DurationUs { get; internal set; }
        /// <summary>The result's content parts (JSON array of MCP content blocks), or null.</summary>
        public string PartsJson { get; internal set; }
        /// <summary>The result's structured content (JSON), or null.</summary>
        public string StructuredJson { get; internal set; }

        internal static readonly string[] Outcomes =
            { "ok", "tool_error", "invalid_arguments", "unknown_tool", "timeout", "cancelled", "denied" };

        internal static string OutcomeName(uint outcome)
        {
            return outcome < Outcomes.Length ? Outcomes[outcome] : "outcome_" + outcome;
        }

        internal static ToolResult FromNative(IntPtr p)
        {
            var r = (Native.Result)Marshal.PtrToStructure(p, typeof(Native.Result));
            return new ToolResult
            {
                Index = (int)(ulong)r.Index,
                Id = Text.FromUtf8(r.Id, (int)(ulong)r.IdLen),
                Name = Text.FromUtf8(r.Name, (int)(ulong)r.NameLen),
                Content = Text.FromUtf8(r.Content, (int)(ulong)r.ContentLen) ?? "",
                Outcome = OutcomeName(r.Outcome),
                IsError = r.IsError != 0,
                DurationUs = (long)r.DurationUs,
                PartsJson = Text.FromUtf8(r.Parts, (int)(ulong)r.PartsLen),
                StructuredJson = Text.FromUtf8(r.Structured, (int)(ulong)r.StructuredLen),
            };
        }

        /// <summary>Results as capstan's normalized results JSON (an array of
        /// <c>{"id","name","content","is_error","outcome"}</c>, parts and
        /// structured content where present): what
        /// <see cref="Formats.WriteResults"/> turns into a provider's messages.</summary>
        public static string ToJson(ToolResult[] results)
        {
            if (results == null) throw new ArgumentNullException("results");
            var sb = new System.Text.StringBuilder("[");
            for (int i = 0; i < results.Length; i++)
            {
                var r = results[i];
                if (i > 0) sb.Append(',');
                sb.Append("{\"id\":").Append(Text.JsonString(r.Id ?? ""))
                  .Append(",\"name\":").Append(Text.JsonString(r.Name ?? ""))
                  .Append(",\"content\":").Append(Text.JsonString(r.Content ?? ""))
                  .Append(",\"is_error\":").Append(r.IsError ? "true" : "false")
                  .Append(",\"outcome\":").Append(Text.JsonString(r.Outcome ?? "ok"));
                if (r.PartsJson != null) sb.Append(",\"parts\":").Append(r.PartsJson);
                if (r.StructuredJson != null) sb.Append(",\"structured_content\":").Append(r.StructuredJson);
                sb.Append('}');
            }
            return sb.Append(']').ToString();
        }

        /// <summary>Results as capstan's normalized JSON writes them (an array).</summary>
        internal static ToolResult[] FromJson(string json)
        {
            var list = (System.Collections.Generic.List<object>)Json.Parse(json);
            var results = new ToolResult[list.Count];
            for (int i = 0; i < list.Count; i++) results[i] = FromObject((System.Collections.Generic.Dictionary<string, object>)list[i], i);
            return results;
        }

        internal static ToolResult FromObject(System.Collections.Generic.Dictionary<string, object> r, int index)
        {
            object parts, structured, duration;
            r.TryGetValue("parts", out parts);
            r.TryGetValue("structured_content", out structured);
            r.TryGetValue("duration_us", out duration);
            return new ToolResult
            {
                Index = index,
                Id = (string)r["id"],
                Name = (string)r["name"],
                Content = (string)r["content"],
                Outcome = (string)r["outcome"],
                IsError = (bool)r["is_error"],
                DurationUs = duration is long ? (long)duration : 0,
                PartsJson = parts == null ? null : MethodTools.JsonValue(parts),
                StructuredJson = structured == null ? null : MethodTools.JsonValue(structured),
            };
        }
    }

    /// <summary>Levels of <see cref="ToolCall.Log"/> (<c>CAPSTAN_LOG_*</c>).</summary>
    public enum LogLevel : uint
    {
        Debug = 0, Info = 1, Notice = 2, Warning = 3, Error = 4, Critical = 5, Alert = 6, Emergency = 7,
    }
}
