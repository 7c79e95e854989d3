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
        /// <summary>Quick: on <see cref="Registry.Execute"/> and
        /// <see cref="Registry.ExecuteJson"/> its calls run on the calling
        /// thread, handed over in one crossing with every other quick call of
        /// the batch and answered in one (<c>CAPSTAN_TOOL_HOST_RUN</c>; other
        /// tools run on capstan's threads meanwhile). For a tool that returns
        /// at once: its <see cref="ToolCall"/> has no progress, log, input or
        /// cancellation. Elsewhere (submit, turns, streams, MCP) it runs as any tool.</summary>
        Quick = 1u << 5,
        /// <summary>Safe to run twice with the same arguments: with a
        /// journal, a call of it that started in an earlier process and never
        /// completed runs again (without the flag: "Outcome unknown:").</summary>
        Idempotent = 1u << 7,
        /// <summary>Replaces a tool of the same name; without it, adding a name
        /// already registered throws <see cref="CapstanException"/>
        /// (<c>CAPSTAN_ERR_INVALID_ARGUMENT</c>, naming the tool).</summary>
        Replace = 1u << 8,
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

        /// <summary>Quick tools' handlers by name (<see cref="ToolFlags.Quick"/>): run by <see cref="ExecuteJson"/>.</summary>
        private readonly System.Collections.Generic.Dictionary<string, Callbacks.Entry> quick =
            new System.Collections.Generic.Dictionary<string, Callbacks.Entry>();

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
            // Waiting for a task on the calling thread could wait for that thread itself (a game's loop).
            if ((flags & ToolFlags.Quick) != 0 && entry.Sync == null)
                throw new ArgumentException("tool \"" + name + "\": a task-returning tool cannot be ToolFlags.Quick (a quick tool returns at once)");
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
                lock (quick)
                {
                    if ((flags & ToolFlags.Quick) != 0) quick[name] = entry;
                    else quick.Remove(name);
                }
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
            lock (quick) quick.Remove(name);
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
                // Quick tools: their calls run on this thread, one crossing each way for the batch.
                if (quick.Count > 0)
                {
                    var results = HostBatch.Execute(Live(), b, ref opts.Value, quick);
                    GC.KeepAlive(handle);
                    return results;
                }
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
