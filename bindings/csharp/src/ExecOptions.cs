using System;
using System.Runtime.InteropServices;

namespace Capstan
{
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
        /// <summary>The run (a conversation, a workflow) the calls belong to:
        /// with a journal on the registry (<see cref="Registry.SetJournal"/>)
        /// each call is recorded and answered under this id plus its call id.
        /// null: the journal is not used.</summary>
        public string RunId { get; set; }

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
        private IntPtr ids, runId;
        private IntPtr[] strings;

        internal NativeExec(ExecOptions o, uint extraFlags = 0)
        {
            try
            {
                Fill(o, extraFlags);
            }
            catch
            {
                // A null approved id: free what was copied before it.
                Dispose();
                throw;
            }
        }

        private void Fill(ExecOptions o, uint extraFlags)
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
            if (o.RunId != null)
            {
                var run = Text.Bytes(o.RunId);
                runId = Marshal.AllocHGlobal(Math.Max(1, run.Length));
                Marshal.Copy(run, 0, runId, run.Length);
                Value.RunId = runId;
                Value.RunIdLen = (UIntPtr)run.Length;
            }
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
            if (runId != IntPtr.Zero) Marshal.FreeHGlobal(runId);
            strings = null;
            ids = runId = IntPtr.Zero;
        }
    }
}
