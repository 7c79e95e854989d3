using System;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using AOT;

[assembly: System.Runtime.CompilerServices.InternalsVisibleTo("CapstanTests")]

namespace Capstan
{
    /// <summary>Flags of a tool (<c>CAPSTAN_TOOL_*</c>).</summary>
    [Flags]
    public enum ToolFlags : uint
    {
        None = 0,
        /// <summary>Never runs without approval.</summary>
        RequiresApproval = 1u << 0,
        /// <summary>Never runs concurrently with itself.</summary>
        Serial = 1u << 1,
        /// <summary>Runs only on the thread that calls <see cref="Registry.Pump"/>
        /// (Unity's <c>Update()</c>, Godot's <c>_Process</c>).</summary>
        MainThread = 1u << 2,
        /// <summary>In a stream with <see cref="ExecOptions.EarlyDispatch"/>, waits
        /// for the response to end before it starts.</summary>
        WaitForResponse = 1u << 3,
        /// <summary>Left out of <see cref="Registry.ToolsJson(Format)"/> until the
        /// search tool (<see cref="Registry.AddSearchTool"/>) finds it.</summary>
        Deferred = 1u << 4,
    }

    /// <summary>Provider formats (<c>CAPSTAN_FORMAT_*</c>).</summary>
    public enum Format : uint
    {
        Describe = 0,
        OpenAIChat = 1,
        OpenAIResponses = 2,
        Anthropic = 3,
        Gemini = 4,
        Mcp = 5,
    }

    /// <summary>One call of a tool, as the tool sees it.</summary>
    public sealed class ToolCall
    {
        internal ToolCall(string argumentsJson, IntPtr handle)
        {
            ArgumentsJson = argumentsJson;
            this.handle = handle;
        }

        private readonly IntPtr handle;
        private string id, name;

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
        /// <c>string</c>, <c>double</c>, <c>bool</c>, <c>null</c>, lists and objects.</summary>
        public System.Collections.Generic.Dictionary<string, object> Arguments
        {
            get { return (System.Collections.Generic.Dictionary<string, object>)Json.Parse(ArgumentsJson); }
        }

        /// <summary>Reports progress (reaches the event hook as
        /// <see cref="EventKind.Progress"/>, and an MCP client that asked for it).
        /// <paramref name="total"/> 0 = unknown. Throws <see cref="CapstanException"/>
        /// for a value that does not grow, or once the call has its result.</summary>
        public void Progress(double progress, double total = 0, string message = null)
        {
            var b = message == null ? null : Text.Bytes(message);
            CapstanException.Check(Native.capstan_call_progress(handle, progress, total, b, (UIntPtr)(b == null ? 0 : b.Length)));
        }

        /// <summary>Sends a log message (the event hook's <see cref="EventKind.Log"/>;
        /// an MCP client's <c>notifications/message</c>).</summary>
        public void Log(LogLevel level, string message)
        {
            if (message == null) throw new ArgumentNullException("message");
            var b = Text.Bytes(message);
            CapstanException.Check(Native.capstan_call_log(handle, (uint)level, b, (UIntPtr)b.Length));
        }

        /// <summary>True once the call timed out, was cancelled or its registry closed
        /// (a tool that is still running should stop). Valid until the call completes.</summary>
        public bool IsCancelled
        {
            get { return Native.capstan_call_cancelled(handle); }
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

    /// <summary>How <see cref="Registry.ToolsJson(Format, ExportFlags)"/> writes the tools.</summary>
    [Flags]
    public enum ExportFlags : uint
    {
        None = 0,
        /// <summary>OpenAI strict mode (every property required, optional ones nullable).</summary>
        Strict = 1u << 0,
        /// <summary>Gemini: schemas lowered to the subset its API takes.</summary>
        GeminiLower = 1u << 1,
        /// <summary>Deferred tools in the provider's own deferred form
        /// (<c>CAPSTAN_EXPORT_DEFERRED_NATIVE</c>) instead of hidden.</summary>
        DeferredNative = 1u << 31,
    }

    /// <summary>Options of one execution.</summary>
    public sealed class ExecOptions
    {
        /// <summary>Run the calls one by one, in order.</summary>
        public bool Sequential { get; set; }
        /// <summary>The model was given OpenAI strict-mode schemas: optional
        /// arguments sent as <c>null</c> are dropped before validation.</summary>
        public bool StrictNulls { get; set; }
        /// <summary>Streams: start each call the moment its arguments are
        /// complete, before the response ends (unless its tool is
        /// <see cref="ToolFlags.WaitForResponse"/>).</summary>
        public bool EarlyDispatch { get; set; }
        /// <summary><see cref="Registry.RunTurn"/>: return the model's own turn
        /// first, then the results: everything to append.</summary>
        public bool WholeTurn { get; set; }
        /// <summary><see cref="Registry.Submit"/>: start every call on the
        /// submitting thread before it returns (a host with no threads to
        /// spare, e.g. WebGL); a tool that blocks blocks the caller.</summary>
        public bool StartInline { get; set; }
        /// <summary>Calls running at once; 0 = capstan's default.</summary>
        public uint Limit { get; set; }
        /// <summary>Per-call timeout in milliseconds; 0 = the tool's own.</summary>
        public uint TimeoutMs { get; set; }
        /// <summary>A bound on every call of the batch, from its submission,
        /// waits (approval, a pump) included, in milliseconds; 0 = none.</summary>
        public uint DeadlineMs { get; set; }
        /// <summary>Ids of calls the user already approved: their
        /// <see cref="ToolFlags.RequiresApproval"/> tools run without the approver.</summary>
        public string[] ApprovedIds { get; set; }

        internal uint Flags
        {
            get
            {
                return (Sequential ? 1u : 0u) | (StrictNulls ? 1u << 2 : 0u) | (StartInline ? 1u << 3 : 0u) |
                       (EarlyDispatch ? 1u << 4 : 0u) | (WholeTurn ? 1u << 5 : 0u);
            }
        }
    }

    /// <summary>An <see cref="ExecOptions"/> as C reads it; owns the copies
    /// of the approved ids until disposed (after the native call).</summary>
    internal sealed class NativeExec : IDisposable
    {
        internal Native.ExecOptions Value;
        private IntPtr ids;
        private IntPtr[] strings;

        internal NativeExec(ExecOptions o, uint extraFlags = 0)
        {
            o = o ?? new ExecOptions();
            Value = new Native.ExecOptions
            {
                StructSize = (uint)Marshal.SizeOf(typeof(Native.ExecOptions)),
                Flags = o.Flags | extraFlags,
                Limit = o.Limit,
                TimeoutMs = o.TimeoutMs,
                DeadlineMs = o.DeadlineMs,
            };
            var approved = o.ApprovedIds;
            if (approved == null || approved.Length == 0) return;
            strings = new IntPtr[approved.Length];
            ids = Marshal.AllocHGlobal(IntPtr.Size * approved.Length);
            for (int i = 0; i < approved.Length; i++)
            {
                if (approved[i] == null) throw new ArgumentException("ApprovedIds[" + i + "] is null");
                strings[i] = Text.Alloc(approved[i]);
                Marshal.WriteIntPtr(ids, i * IntPtr.Size, strings[i]);
            }
            Value.ApprovedIds = ids;
            Value.ApprovedCount = (UIntPtr)approved.Length;
        }

        public void Dispose()
        {
            if (strings != null) foreach (var p in strings) if (p != IntPtr.Zero) Marshal.FreeHGlobal(p);
            if (ids != IntPtr.Zero) Marshal.FreeHGlobal(ids);
            strings = null;
            ids = IntPtr.Zero;
        }
    }

    internal sealed class RegistryHandle : SafeHandle
    {
        internal RegistryHandle() : base(IntPtr.Zero, true) { }

        public override bool IsInvalid
        {
            get { return handle == IntPtr.Zero; }
        }

        internal void Set(IntPtr p)
        {
            SetHandle(p);
        }

        protected override bool ReleaseHandle()
        {
            Native.capstan_registry_free(handle);
            return true;
        }
    }

    /// <summary>A set of tools by name: registers them, checks a model's calls
    /// against their schemas, runs them in parallel on capstan's threads (or
    /// on the thread that calls <see cref="Pump"/>, for
    /// <see cref="ToolFlags.MainThread"/> tools) and renders each result for
    /// the model. Thread-safe; <see cref="Dispose"/> frees it (calls still
    /// waiting end cancelled).</summary>
    public sealed partial class Registry : IDisposable
    {
        private readonly RegistryHandle handle = new RegistryHandle();

        public Registry()
        {
            IntPtr p;
            CapstanException.Check(Native.capstan_registry_new(IntPtr.Zero, out p));
            handle.Set(p);
        }

        /// <summary>The native library's version, e.g. <c>0.4.0</c>.</summary>
        public static string LibraryVersion
        {
            get { return Text.FromNts(Native.capstan_version_string()); }
        }

        internal IntPtr Live()
        {
            if (handle.IsClosed) throw new ObjectDisposedException("Registry");
            return handle.DangerousGetHandle();
        }

        /// <summary>Registers a tool whose handler returns the result's text.
        /// <paramref name="parametersJson"/> is the JSON Schema of its
        /// arguments (null: no arguments). An exception thrown by the handler
        /// becomes a tool error the model reads. Throws
        /// <see cref="CapstanException"/> naming what was wrong (a bad name,
        /// a schema that does not compile).</summary>
        public void AddTool(string name, string description, string parametersJson,
                            Func<ToolCall, string> handler, ToolFlags flags = ToolFlags.None, uint timeoutMs = 0)
        {
            if (handler == null) throw new ArgumentNullException("handler");
            Add(name, description, parametersJson,
                new Callbacks.Entry(c => new Callbacks.Reply(handler(c), false), null), flags, timeoutMs);
        }

        /// <summary>Registers a tool whose handler returns a <see cref="ToolOutput"/>
        /// (text, JSON, or content parts: images, audio, files).
        /// <paramref name="mcpMetaJson"/>: what MCP clients see beside the
        /// schema (<c>{"title","annotations","outputSchema"}</c>), checked
        /// here; an <c>outputSchema</c> is enforced on the tool's results.</summary>
        public void AddTool(string name, string description, string parametersJson,
                            Func<ToolCall, ToolOutput> handler, ToolFlags flags = ToolFlags.None, uint timeoutMs = 0,
                            string mcpMetaJson = null)
        {
            if (handler == null) throw new ArgumentNullException("handler");
            Add(name, description, parametersJson, new Callbacks.Entry(c =>
            {
                var o = handler(c);
                if (o == null) throw new InvalidOperationException("the tool returned no ToolOutput");
                return o.Reply;
            }, null), flags, timeoutMs, mcpMetaJson);
        }

        /// <summary>Registers a tool whose handler returns a task: the call
        /// stays open, holding no thread, until the task ends (its result's
        /// text, or its exception as a tool error).</summary>
        public void AddAsyncTool(string name, string description, string parametersJson,
                                 Func<ToolCall, Task<string>> handler, ToolFlags flags = ToolFlags.None, uint timeoutMs = 0)
        {
            if (handler == null) throw new ArgumentNullException("handler");
            Add(name, description, parametersJson,
                new Callbacks.Entry(null, c =>
                {
                    var t = handler(c);
                    return t == null ? null : t.ContinueWith(r => new Callbacks.Reply(r.Result, false), TaskContinuationOptions.ExecuteSynchronously);
                }), flags, timeoutMs);
        }

        private IJsonAdapter jsonAdapter = BuiltInJson.Instance;

        /// <summary>How <see cref="AddTools(Type)"/> turns a call's arguments into
        /// the method's parameters and its return value into JSON, and what a
        /// member is called in the schema: <see cref="BuiltInJson"/> (no
        /// dependency) unless set, e.g. to the Newtonsoft.Json adapter
        /// (<c>Capstan.Newtonsoft.dll</c>). Read when tools are added.</summary>
        public IJsonAdapter JsonAdapter
        {
            get { return jsonAdapter; }
            set
            {
                if (value == null) throw new ArgumentNullException("value");
                jsonAdapter = value;
            }
        }

        /// <summary>Registers every public static method of <paramref name="type"/>
        /// marked <see cref="ToolAttribute"/>: its schema derived from its
        /// parameters (see <see cref="MethodTools"/>), its arguments converted
        /// to their types, its return value the result (a string as text,
        /// anything else as JSON, a <c>Task</c> awaited). Returns how many.</summary>
        public int AddTools(Type type)
        {
            return AddMethods(type, null);
        }

        /// <summary><see cref="AddTools(Type)"/> for the instance and static
        /// methods of <paramref name="target"/>'s type, instance ones called on it.</summary>
        public int AddTools(object target)
        {
            if (target == null) throw new ArgumentNullException("target");
            return AddMethods(target.GetType(), target);
        }

        private int AddMethods(Type type, object target)
        {
            int n = 0;
            foreach (var tool in MethodTools.Of(type, target, JsonAdapter))
            {
                Add(tool.Name, tool.Description, tool.Schema, tool.Entry, tool.Flags, tool.TimeoutMs);
                n++;
            }
            return n;
        }

        private void Add(string name, string description, string parametersJson, Callbacks.Entry entry,
                         ToolFlags flags, uint timeoutMs, string mcpMetaJson = null)
        {
            if (name == null) throw new ArgumentNullException("name");
            var reg = Live();
            var strings = new[] { name, description, parametersJson, mcpMetaJson };
            var pinned = new GCHandle[4];
            var data = Callbacks.Hold(entry);
            try
            {
                var ptrs = new IntPtr[4];
                for (int i = 0; i < 4; i++)
                {
                    if (strings[i] == null) continue;
                    pinned[i] = GCHandle.Alloc(Text.Nts(strings[i]), GCHandleType.Pinned);
                    ptrs[i] = pinned[i].AddrOfPinnedObject();
                }
                var def = new Native.ToolDef
                {
                    StructSize = (uint)Marshal.SizeOf(typeof(Native.ToolDef)),
                    Name = ptrs[0],
                    Description = ptrs[1],
                    Parameters = ptrs[2],
                    Callback = Callbacks.ToolPtr,
                    UserData = data,
                    Destroy = Callbacks.DestroyPtr,
                    TimeoutMs = timeoutMs,
                    Flags = (uint)flags,
                    McpMeta = ptrs[3],
                };
                // capstan runs destroy (freeing `data`) exactly once, also when this fails.
                CapstanException.Check(Native.capstan_registry_add_tool(reg, ref def));
            }
            finally
            {
                foreach (var p in pinned) if (p.IsAllocated) p.Free();
                GC.KeepAlive(handle);
            }
        }

        /// <summary>Removes a tool; its calls in flight finish.</summary>
        public void RemoveTool(string name)
        {
            var b = Text.Bytes(name);
            CapstanException.Check(Native.capstan_registry_remove_tool(Live(), b, (UIntPtr)b.Length));
        }

        /// <summary>The tool definitions in a provider's format, JSON text
        /// (an array; for Gemini the API's <c>tools</c> value).</summary>
        public string ToolsJson(Format format)
        {
            return ToolsJson(format, ExportFlags.None);
        }

        /// <summary><see cref="ToolsJson(Format)"/> with export flags: OpenAI
        /// strict mode, Gemini's lowered schemas, deferred tools in the
        /// provider's own form.</summary>
        public string ToolsJson(Format format, ExportFlags flags)
        {
            var opts = new Native.ExportOptions
            {
                StructSize = (uint)Marshal.SizeOf(typeof(Native.ExportOptions)),
                Flags = (uint)flags & ~(uint)ExportFlags.DeferredNative,
                Deferred = (flags & ExportFlags.DeferredNative) != 0 ? 1u : 0u,
            };
            IntPtr json, report;
            UIntPtr len, reportLen;
            CapstanException.Check(Native.capstan_registry_tools_json(Live(), (uint)format, ref opts,
                out json, out len, out report, out reportLen));
            Text.Take(report, reportLen);
            return Text.Take(json, len);
        }

        /// <summary>The registered tools' names, a JSON array.</summary>
        public string NamesJson()
        {
            IntPtr json;
            UIntPtr len;
            CapstanException.Check(Native.capstan_registry_names_json(Live(), out json, out len));
            return Text.Take(json, len);
        }

        /// <summary>Runs normalized calls (<c>{"id","name","arguments"}</c>,
        /// one or an array, JSON text) and blocks until each has its one
        /// result; returns the results as JSON text, in call order. Tool
        /// failures, invalid arguments and unknown tools are results;
        /// <see cref="CapstanException"/> only when the text is not calls.</summary>
        public string ExecuteJson(string callsJson, ExecOptions options = null)
        {
            var b = Text.Bytes(callsJson);
            using (var opts = new NativeExec(options))
            {
                IntPtr outp;
                UIntPtr len;
                CapstanException.Check(Native.capstan_registry_execute(Live(), b, (UIntPtr)b.Length, ref opts.Value, out outp, out len));
                return Text.Take(outp, len);
            }
        }

        /// <summary><see cref="ExecuteJson"/>, the results read into <see cref="ToolResult"/>s.</summary>
        public ToolResult[] Execute(string callsJson, ExecOptions options = null)
        {
            return ToolResult.FromJson(ExecuteJson(callsJson, options));
        }

        /// <summary>One agent turn: reads the calls out of a provider's
        /// response (JSON text in <paramref name="format"/>), runs them, and
        /// returns what to append to the conversation, JSON text in that
        /// format. A provider error body throws
        /// <see cref="CapstanException"/> (<c>CAPSTAN_ERR_PROVIDER_ERROR</c>) and
        /// runs nothing.</summary>
        public string RunTurn(Format format, string responseJson, ExecOptions options = null)
        {
            var b = Text.Bytes(responseJson);
            using (var opts = new NativeExec(options))
            {
                IntPtr outp;
                UIntPtr len;
                CapstanException.Check(Native.capstan_registry_run_turn(Live(), (uint)format, b, (UIntPtr)b.Length, ref opts.Value, out outp, out len));
                return Text.Take(outp, len);
            }
        }

        /// <summary>Runs the <see cref="ToolFlags.MainThread"/> calls waiting,
        /// on the calling thread, for about <paramref name="budgetMs"/> (at
        /// least one if any waits). Call it from the game loop. Returns how
        /// many ran.</summary>
        public int Pump(uint budgetMs = 0)
        {
            return (int)(ulong)Native.capstan_registry_pump(Live(), budgetMs);
        }

        /// <summary>Frees the registry: calls not yet started are cancelled;
        /// each tool's handler is released once its calls are done.</summary>
        public void Dispose()
        {
            handle.Dispose();
        }
    }
}
