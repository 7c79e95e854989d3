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
        internal ToolCall(string id, string name, string argumentsJson, IntPtr handle)
        {
            Id = id;
            Name = name;
            ArgumentsJson = argumentsJson;
            this.handle = handle;
        }

        private readonly IntPtr handle;

        /// <summary>The model's call id.</summary>
        public string Id { get; private set; }

        /// <summary>The tool's name.</summary>
        public string Name { get; private set; }

        /// <summary>The validated arguments (defaults filled in), JSON text of an object.</summary>
        public string ArgumentsJson { get; private set; }

        /// <summary>The validated arguments, parsed: string keys to
        /// <c>string</c>, <c>double</c>, <c>bool</c>, <c>null</c>, lists and objects.</summary>
        public System.Collections.Generic.Dictionary<string, object> Arguments
        {
            get { return (System.Collections.Generic.Dictionary<string, object>)Json.Parse(ArgumentsJson); }
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
    }

    /// <summary>Options of one execution.</summary>
    public sealed class ExecOptions
    {
        /// <summary>Run the calls one by one, in order.</summary>
        public bool Sequential { get; set; }
        /// <summary>Calls running at once; 0 = capstan's default.</summary>
        public uint Limit { get; set; }
        /// <summary>Per-call timeout in milliseconds; 0 = the tool's own.</summary>
        public uint TimeoutMs { get; set; }
        /// <summary>A bound on the whole batch in milliseconds; 0 = none.</summary>
        public uint DeadlineMs { get; set; }

        internal Native.ExecOptions ToNative()
        {
            return new Native.ExecOptions
            {
                StructSize = (uint)Marshal.SizeOf(typeof(Native.ExecOptions)),
                Flags = Sequential ? 1u : 0u,
                Limit = Limit,
                TimeoutMs = TimeoutMs,
                DeadlineMs = DeadlineMs,
            };
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
    public sealed class Registry : IDisposable
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

        private IntPtr Live()
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
            foreach (var tool in MethodTools.Of(type, target))
            {
                Add(tool.Name, tool.Description, tool.Schema, tool.Entry, tool.Flags, tool.TimeoutMs);
                n++;
            }
            return n;
        }

        private void Add(string name, string description, string parametersJson, Callbacks.Entry entry,
                         ToolFlags flags, uint timeoutMs)
        {
            if (name == null) throw new ArgumentNullException("name");
            var reg = Live();
            var strings = new[] { name, description, parametersJson };
            var pinned = new GCHandle[3];
            var data = GCHandle.Alloc(entry);
            Interlocked.Increment(ref Callbacks.Live);
            try
            {
                var ptrs = new IntPtr[3];
                for (int i = 0; i < 3; i++)
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
                    UserData = GCHandle.ToIntPtr(data),
                    Destroy = Callbacks.DestroyPtr,
                    TimeoutMs = timeoutMs,
                    Flags = (uint)flags,
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
            IntPtr json, report;
            UIntPtr len, reportLen;
            CapstanException.Check(Native.capstan_registry_tools_json(Live(), (uint)format, IntPtr.Zero,
                out json, out len, out report, out reportLen));
            Text.Take(report, reportLen);
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
            var opts = (options ?? new ExecOptions()).ToNative();
            IntPtr outp;
            UIntPtr len;
            CapstanException.Check(Native.capstan_registry_execute(Live(), b, (UIntPtr)b.Length, ref opts, out outp, out len));
            return Text.Take(outp, len);
        }

        /// <summary><see cref="ExecuteJson"/>, the results read into <see cref="ToolResult"/>s.</summary>
        public ToolResult[] Execute(string callsJson, ExecOptions options = null)
        {
            var list = (System.Collections.Generic.List<object>)Json.Parse(ExecuteJson(callsJson, options));
            var results = new ToolResult[list.Count];
            for (int i = 0; i < list.Count; i++)
            {
                var r = (System.Collections.Generic.Dictionary<string, object>)list[i];
                results[i] = new ToolResult
                {
                    Id = (string)r["id"],
                    Name = (string)r["name"],
                    Content = (string)r["content"],
                    Outcome = (string)r["outcome"],
                    IsError = (bool)r["is_error"],
                };
            }
            return results;
        }

        /// <summary><see cref="Execute"/> on a pool thread, for a caller that must
        /// not block (a UI or game thread: its main-thread tools then run in
        /// its <see cref="Pump"/>).</summary>
        public Task<ToolResult[]> ExecuteAsync(string callsJson, ExecOptions options = null)
        {
            return Task.Run(() => Execute(callsJson, options));
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
            var opts = (options ?? new ExecOptions()).ToNative();
            IntPtr outp;
            UIntPtr len;
            CapstanException.Check(Native.capstan_registry_run_turn(Live(), (uint)format, b, (UIntPtr)b.Length, ref opts, out outp, out len));
            return Text.Take(outp, len);
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

    /// <summary>The static thunks capstan calls (IL2CPP's rule: static,
    /// [MonoPInvokeCallback]); each finds its tool through <c>user_data</c>, a
    /// GCHandle.</summary>
    internal static class Callbacks
    {
        /// <summary>What a tool answered: text, or JSON text (<c>CAPSTAN_CONTENT_JSON</c>).</summary>
        internal struct Reply
        {
            internal Reply(string text, bool json)
            {
                Text = text;
                IsJson = json;
            }

            internal readonly string Text;
            internal readonly bool IsJson;
        }

        internal sealed class Entry
        {
            internal Entry(Func<ToolCall, Reply> sync, Func<ToolCall, Task<Reply>> async)
            {
                Sync = sync;
                Async = async;
            }

            internal readonly Func<ToolCall, Reply> Sync;
            internal readonly Func<ToolCall, Task<Reply>> Async;
        }

        // The delegates live as long as the process: capstan keeps their pointers.
        private static readonly Native.ToolFn ToolThunk = OnCall;
        private static readonly Native.DestroyFn DestroyThunk = OnDestroy;
        internal static readonly IntPtr ToolPtr = Marshal.GetFunctionPointerForDelegate(ToolThunk);
        internal static readonly IntPtr DestroyPtr = Marshal.GetFunctionPointerForDelegate(DestroyThunk);

        [MonoPInvokeCallback(typeof(Native.ToolFn))]
        private static void OnCall(IntPtr userData, IntPtr call)
        {
            // Nothing may escape into native code: every failure completes the call.
            try
            {
                var entry = (Entry)GCHandle.FromIntPtr(userData).Target;
                UIntPtr n;
                var args = Text.FromUtf8(Native.capstan_call_arguments(call, out n), (int)(ulong)n);
                var id = Text.FromUtf8(Native.capstan_call_id(call, out n), (int)(ulong)n);
                var name = Text.FromUtf8(Native.capstan_call_tool(call, out n), (int)(ulong)n);
                var tc = new ToolCall(id, name, args, call);
                if (entry.Sync != null)
                {
                    Return(call, entry.Sync(tc));
                    return;
                }
                var task = entry.Async(tc);
                if (task == null)
                {
                    Fail(call, "the tool returned no task");
                    return;
                }
                // The call stays open until the task ends; the handle stays valid until then.
                task.ContinueWith(t => Finish(call, t), TaskContinuationOptions.ExecuteSynchronously);
            }
            catch (Exception e)
            {
                Fail(call, Describe(e));
            }
        }

        private static void Finish(IntPtr call, Task<Reply> t)
        {
            try
            {
                if (t.IsFaulted) Fail(call, Describe(t.Exception.GetBaseException()));
                else if (t.IsCanceled) Fail(call, "the tool's task was cancelled");
                else Return(call, t.Result);
            }
            catch (Exception e)
            {
                Fail(call, Describe(e));
            }
        }

        private static string Describe(Exception e)
        {
            return e.GetType().Name + ": " + e.Message;
        }

        private static void Return(IntPtr call, Reply reply)
        {
            var b = Text.Bytes(reply.Text ?? "");
            Native.capstan_call_return(call, reply.IsJson ? Native.ContentJson : Native.ContentText, b, (UIntPtr)b.Length);
        }

        private static void Fail(IntPtr call, string message)
        {
            var b = Text.Bytes(message);
            Native.capstan_call_fail(call, b, (UIntPtr)b.Length);
        }

        /// <summary>Tool handlers registered and not yet released by capstan.</summary>
        internal static int Live;

        [MonoPInvokeCallback(typeof(Native.DestroyFn))]
        private static void OnDestroy(IntPtr userData)
        {
            try
            {
                GCHandle.FromIntPtr(userData).Free();
                Interlocked.Decrement(ref Live);
            }
            catch (Exception)
            {
                // A handle freed twice cannot happen (capstan calls destroy once); never throw into native code.
            }
        }
    }
}
