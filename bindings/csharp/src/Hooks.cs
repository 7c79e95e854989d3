using System;
using System.Runtime.InteropServices;
using System.Threading;

namespace Capstan
{
    /// <summary>A call waiting for the host's approval (its tool is
    /// <see cref="ToolFlags.RequiresApproval"/>). Decide once, from any
    /// thread, now or later (a dialog answered frames later).</summary>
    public sealed class Approval
    {
        private IntPtr handle;

        internal Approval(IntPtr handle)
        {
            this.handle = handle;
            UIntPtr n;
            Tool = Text.FromUtf8(Native.capstan_approval_tool(handle, out n), (int)(ulong)n);
            Id = Text.FromUtf8(Native.capstan_approval_id(handle, out n), (int)(ulong)n);
            ArgumentsJson = Text.FromUtf8(Native.capstan_approval_arguments(handle, out n), (int)(ulong)n);
        }

        /// <summary>The tool's name.</summary>
        public string Tool { get; private set; }
        /// <summary>The call's id.</summary>
        public string Id { get; private set; }
        /// <summary>The validated arguments, JSON text.</summary>
        public string ArgumentsJson { get; private set; }

        /// <summary>The call runs. <see cref="CapstanException"/>
        /// (<c>CAPSTAN_ERR_ALREADY_COMPLETED</c> or <c>STALE_HANDLE</c>) for a
        /// second decision or one after the call ended otherwise.</summary>
        public void Approve()
        {
            Decide(true, null);
        }

        /// <summary>The call ends <c>denied</c>, the model reading <paramref name="reason"/>.</summary>
        public void Deny(string reason = null)
        {
            Decide(false, reason);
        }

        internal void TryDeny(string reason)
        {
            var b = Text.Bytes(reason);
            var h = Interlocked.Exchange(ref handle, IntPtr.Zero);
            if (h != IntPtr.Zero) Native.capstan_approval_decide(h, false, b, (UIntPtr)b.Length);
        }

        private void Decide(bool approve, string reason)
        {
            var b = reason == null ? null : Text.Bytes(reason);
            var h = Interlocked.Exchange(ref handle, IntPtr.Zero);
            if (h == IntPtr.Zero) throw new InvalidOperationException("this approval was already decided");
            CapstanException.Check(Native.capstan_approval_decide(h, approve, b, (UIntPtr)(b == null ? 0 : b.Length)));
        }
    }

    /// <summary>What a <see cref="ToolEvent"/> reports (<c>CAPSTAN_EVENT_*</c>).</summary>
    public enum EventKind : uint
    {
        Started = 0, Finished = 1, TimedOut = 2, Cancelled = 3, Progress = 4, Log = 5,
        /// <summary>The call was answered from the journal without running its tool; a <see cref="Finished"/> follows.</summary>
        Replayed = 6,
    }

    /// <summary>One event of the registry's event hook.</summary>
    public sealed class ToolEvent
    {
        public EventKind Kind { get; private set; }
        public string Tool { get; private set; }
        public string Id { get; private set; }
        /// <summary>The call's position in its batch.</summary>
        public int Index { get; private set; }
        /// <summary>For <see cref="EventKind.Finished"/>: the outcome's name; else null.</summary>
        public string Outcome { get; private set; }
        public long DurationUs { get; private set; }
        public double Progress { get; private set; }
        public double Total { get; private set; }
        /// <summary>For progress and log events: the message, or null.</summary>
        public string Message { get; private set; }
        public LogLevel Level { get; private set; }

        internal static ToolEvent FromNative(IntPtr p)
        {
            var e = (Native.Event)Marshal.PtrToStructure(p, typeof(Native.Event));
            var kind = (EventKind)e.Kind;
            return new ToolEvent
            {
                Kind = kind,
                Tool = Text.FromUtf8(e.Tool, (int)(ulong)e.ToolLen),
                Id = Text.FromUtf8(e.Id, (int)(ulong)e.IdLen),
                Index = (int)(ulong)e.Index,
                Outcome = kind == EventKind.Finished ? ToolResult.OutcomeName(e.Outcome) : null,
                DurationUs = (long)e.DurationUs,
                Progress = e.Progress,
                Total = e.Total,
                Message = Text.FromUtf8(e.Message, (int)(ulong)e.MessageLen),
                Level = (LogLevel)e.Level,
            };
        }
    }

    /// <summary>Exceptions thrown by a host's handler where no caller can
    /// receive them (a result, event, text or notify handler running on a
    /// capstan thread): they never reach native code.</summary>
    public static class Hooks
    {
        /// <summary>Raised with such an exception; without a subscriber it is
        /// written to standard error.</summary>
        public static event Action<Exception> UnhandledException;

        internal static void Unhandled(Exception e)
        {
            var h = UnhandledException;
            try
            {
                if (h != null) h(e);
                else Console.Error.WriteLine("capstan: a handler threw: " + e);
            }
            catch (Exception)
            {
                // Never into native code.
            }
        }
    }

    public sealed partial class Registry
    {
        /// <summary>Sets (null: removes) the approver: it receives every call of
        /// a <see cref="ToolFlags.RequiresApproval"/> tool not in the batch's
        /// <see cref="ExecOptions.ApprovedIds"/>, on a capstan thread, and
        /// decides now or later (<see cref="Approval.Approve"/>,
        /// <see cref="Approval.Deny"/>). An approver that throws denies the call.
        /// Without one such calls end <c>denied</c>.</summary>
        public void SetApprover(Action<Approval> approver)
        {
            SetHook(approver, Callbacks.ApproverPtr, Native.capstan_registry_set_approver);
        }

        /// <summary>Sets (null: removes) the event hook: every call's start,
        /// end, timeout, cancellation, progress and log, on the thread where
        /// it happens. Must be quick.</summary>
        public void SetEventHook(Action<ToolEvent> hook)
        {
            SetHook(hook, Callbacks.EventPtr, Native.capstan_registry_set_event_hook);
        }

        /// <summary>Sets (null: removes) the wake-up: called on any thread when a
        /// main-thread call waits for <see cref="Pump"/> or a polled result is
        /// queued. Post to your loop and return; never call capstan from it.</summary>
        public void SetNotify(Action notify)
        {
            SetHook(notify, Callbacks.NotifyPtr, Native.capstan_registry_set_notify);
        }

        private delegate int SetFn(IntPtr reg, IntPtr fn, IntPtr userData, IntPtr destroy);

        private void SetHook(object target, IntPtr thunk, SetFn set)
        {
            var reg = Live();
            if (target == null)
            {
                CapstanException.Check(set(reg, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero));
                return;
            }
            // capstan runs destroy (releasing the handle) exactly once, also when this fails.
            var ud = Callbacks.Hold(target);
            int status = set(reg, thunk, ud, Callbacks.DestroyPtr);
            GC.KeepAlive(handle);
            CapstanException.Check(status);
        }

        /// <summary>Per-tool statistics, JSON:
        /// <c>{"tools":{"name":{"calls","outcomes":{...},"in_flight","p50_us","p99_us"}}}</c>.</summary>
        public string StatsJson()
        {
            IntPtr json;
            UIntPtr len;
            CapstanException.Check(Native.capstan_registry_stats_json(Live(), out json, out len));
            return Text.Take(json, len);
        }

        /// <summary>Which calls would wait for approval, JSON
        /// <c>[{"index","id","name"}]</c>; runs nothing.</summary>
        public string NeedsApprovalJson(string callsJson, ExecOptions options = null)
        {
            var b = Text.Bytes(callsJson);
            using (var opts = new NativeExec(options))
            {
                IntPtr json;
                UIntPtr len;
                CapstanException.Check(Native.capstan_registry_needs_approval(Live(), b, (UIntPtr)b.Length, ref opts.Value, out json, out len));
                return Text.Take(json, len);
            }
        }

        /// <summary>The tools that best match <paramref name="query"/> (words,
        /// ranked by BM25; or a regular expression), JSON
        /// <c>{"query","mode","results":[{"name","description","score"}]}</c>.
        /// <paramref name="limit"/> 0 = 5, at most 100.</summary>
        public string SearchJson(string query, bool regex = false, uint limit = 0)
        {
            var b = Text.Bytes(query);
            var opts = new Native.SearchOptions
            {
                StructSize = (uint)Marshal.SizeOf(typeof(Native.SearchOptions)),
                Flags = regex ? 1u : 0u,
                Limit = limit,
            };
            IntPtr json;
            UIntPtr len;
            CapstanException.Check(Native.capstan_registry_search_json(Live(), b, (UIntPtr)b.Length, ref opts, out json, out len));
            return Text.Take(json, len);
        }

        /// <summary>Registers the built-in search tool (<c>tool_search</c>
        /// unless named): the model finds tools it was not shown, and every
        /// <see cref="ToolFlags.Deferred"/> tool found is exported from then on.</summary>
        public void AddSearchTool(string name = null, string description = null, uint limit = 0, bool regex = false)
        {
            IntPtr n = name == null ? IntPtr.Zero : Text.Alloc(name);
            IntPtr d = description == null ? IntPtr.Zero : Text.Alloc(description);
            try
            {
                var opts = new Native.SearchToolOptions
                {
                    StructSize = (uint)Marshal.SizeOf(typeof(Native.SearchToolOptions)),
                    Flags = regex ? 1u : 0u,
                    Limit = limit,
                    Name = n,
                    Description = d,
                };
                CapstanException.Check(Native.capstan_registry_add_search_tool(Live(), ref opts));
            }
            finally
            {
                if (n != IntPtr.Zero) Marshal.FreeHGlobal(n);
                if (d != IntPtr.Zero) Marshal.FreeHGlobal(d);
            }
        }

        /// <summary>Forgets the deferred tools the search tool loaded (a new conversation).</summary>
        public void UnloadTools()
        {
            CapstanException.Check(Native.capstan_registry_unload_tools(Live()));
        }
    }
}
