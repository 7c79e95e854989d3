using System;
using System.Runtime.InteropServices;
using System.Threading;
using AOT;

namespace Capstan
{
    /// <summary>A journal kept by the host (its own database or durable
    /// engine), for <see cref="Journal.Custom"/>. Both methods run on the
    /// thread running the call: one of capstan's threads, or the thread
    /// inside <c>Execute</c>, several at once, so the store must be
    /// thread-safe; neither may call into a registry using the journal. An
    /// exception from either fails the call with an error result naming the
    /// method ("the host's record returned 1") and goes to
    /// <see cref="Hooks.UnhandledException"/>: only a status crosses the C
    /// ABI, never the exception.</summary>
    public interface IJournalStore
    {
        /// <summary>Stores one record, a JSON object with <c>kind</c>,
        /// <c>run</c> and <c>call</c>, durably before returning. Per call,
        /// a <c>started</c> (before its tool runs; if this throws, the tool
        /// does not run) then a <c>completed</c> (its result; if this
        /// throws, the result is still handed over and a later run finds the
        /// call's outcome unknown), and a <c>completed</c> replaces the
        /// <c>started</c> of its (run, call) key. A <c>tools</c> record (the
        /// tool list, keyed by a batch's first call) is never looked up: keep
        /// it apart or drop it.</summary>
        void Record(string recordJson);

        /// <summary>The record of this key (<c>completed</c> if any, else
        /// <c>started</c>), the text <see cref="Record"/> was given; null if
        /// none. Text that is not such a record fails the call naming what is
        /// wrong with it.</summary>
        string Lookup(string runId, string callId);
    }

    /// <summary>A journal of calls (issue 47, docs/durable-calls.md): a
    /// registry using it (<see cref="Registry.SetJournal"/>) records every
    /// call run with a run id (<see cref="ExecOptions.RunId"/>) and answers a
    /// call it has a completed record of without running its tool. A call
    /// that started in an earlier process and never completed runs again if
    /// its tool is <see cref="ToolFlags.Idempotent"/>, else fails with content
    /// beginning "Outcome unknown:". A registry using the journal keeps it
    /// alive: the two may be disposed in any order.</summary>
    public sealed class Journal : IDisposable
    {
        private IntPtr journal;

        private Journal(IntPtr journal)
        {
            this.journal = journal;
        }

        /// <summary>Opens (creating it if absent) a JSON Lines journal: record/replay
        /// fixtures a test checks in; one process at a time. Throws
        /// <see cref="CapstanException"/> (<c>CAPSTAN_ERR_INVALID_ARGUMENT</c>)
        /// for a file that cannot be opened or holds a line that is not a
        /// record, naming the line (the file is left as it was).</summary>
        public static Journal OpenJsonLines(string path)
        {
            var b = Text.Bytes(path);
            IntPtr j;
            CapstanException.Check(Native.capstan_journal_open_jsonl(b, (UIntPtr)b.Length, out j));
            return new Journal(j);
        }

        /// <summary>Opens (creating it if absent) an SQLite journal: WAL, one
        /// transaction per record, several processes on one file;
        /// <paramref name="fullSync"/> fsyncs every commit. Throws
        /// <see cref="CapstanException"/> (<c>CAPSTAN_ERR_UNSUPPORTED</c>) with
        /// a library built without the <c>journal-sqlite</c> feature.</summary>
        public static Journal OpenSqlite(string path, bool fullSync = false)
        {
            var b = Text.Bytes(path);
            IntPtr j;
            CapstanException.Check(Native.capstan_journal_open_sqlite(b, (UIntPtr)b.Length, fullSync ? 1u : 0u, out j));
            return new Journal(j);
        }

        /// <summary>A journal kept by <paramref name="store"/>
        /// (<c>capstan_journal_new</c>). The store stays referenced while
        /// this journal or a registry using it lives, whatever the order
        /// they are disposed in, and is let go once both are gone.</summary>
        public static Journal Custom(IJournalStore store)
        {
            if (store == null) throw new ArgumentNullException("store", "Journal.Custom needs a store");
            var cbs = new Native.JournalCallbacks
            {
                StructSize = (uint)Marshal.SizeOf(typeof(Native.JournalCallbacks)),
                Record = RecordPtr,
                Lookup = LookupPtr,
                UserData = Callbacks.Hold(store),
                Destroy = StoreDestroyPtr,
            };
            IntPtr j;
            // On failure capstan has run destroy: the handle is released either way.
            CapstanException.Check(Native.capstan_journal_new(ref cbs, out j));
            return new Journal(j);
        }

        // The thunks of a host's store live as long as the process: capstan keeps their pointers.
        private static readonly Native.JournalRecordFn RecordThunk = OnRecord;
        private static readonly Native.JournalLookupFn LookupThunk = OnLookup;
        private static readonly Native.DestroyFn StoreDestroyThunk = OnStoreDestroy;
        private static readonly IntPtr RecordPtr = Marshal.GetFunctionPointerForDelegate(RecordThunk);
        private static readonly IntPtr LookupPtr = Marshal.GetFunctionPointerForDelegate(LookupThunk);
        private static readonly IntPtr StoreDestroyPtr = Marshal.GetFunctionPointerForDelegate(StoreDestroyThunk);

        /// <summary>How many host stores capstan has let go (their destroy ran): a test's count.</summary>
        internal static int StoresReleased;

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.JournalRecordFn))]
        private static int OnRecord(IntPtr userData, IntPtr json, UIntPtr len)
        {
            try
            {
                var store = (IJournalStore)GCHandle.FromIntPtr(userData).Target;
                store.Record(Text.FromUtf8(json, (int)(ulong)len));
                return 0;
            }
            catch (Exception e)
            {
                // The call fails ("the host's record returned 1"); nothing crosses into native code.
                Hooks.Unhandled(e);
                return 1;
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.JournalLookupFn))]
        private static int OnLookup(IntPtr userData, IntPtr run, UIntPtr runLen, IntPtr call, UIntPtr callLen, IntPtr answer)
        {
            try
            {
                var store = (IJournalStore)GCHandle.FromIntPtr(userData).Target;
                var found = store.Lookup(Text.FromUtf8(run, (int)(ulong)runLen), Text.FromUtf8(call, (int)(ulong)callLen));
                if (found == null) return 0;
                var b = Text.Bytes(found);
                // Text that is not a record: capstan keeps why, and fails the call saying it.
                Native.capstan_journal_answer_set(answer, b, (UIntPtr)b.Length);
                return 0;
            }
            catch (Exception e)
            {
                Hooks.Unhandled(e);
                return 1;
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.DestroyFn))]
        private static void OnStoreDestroy(IntPtr userData)
        {
            try
            {
                Callbacks.Release(userData);
                Interlocked.Increment(ref StoresReleased);
            }
            catch (Exception)
            {
                // capstan calls destroy once; never throw into native code.
            }
        }

        internal IntPtr Live()
        {
            var j = journal;
            if (j == IntPtr.Zero) throw new ObjectDisposedException("Journal");
            return j;
        }

        /// <summary>Frees the journal; registries using it keep it until they stop.</summary>
        public void Dispose()
        {
            lock (this)
            {
                if (journal != IntPtr.Zero) Native.capstan_journal_free(journal);
                journal = IntPtr.Zero;
            }
            GC.SuppressFinalize(this);
        }

        ~Journal()
        {
            Dispose();
        }
    }

    public sealed partial class Registry
    {
        /// <summary>Makes the registry use <paramref name="journal"/> (null:
        /// none) for every batch run with <see cref="ExecOptions.RunId"/>, from
        /// the next batch on. With <paramref name="replay"/> no tool runs at
        /// all and nothing is written: a call missing from the journal fails
        /// with an error result naming it (a test run offline from a recorded
        /// session).</summary>
        public void SetJournal(Journal journal, bool replay = false)
        {
            var reg = Live();
            uint flags = replay ? 1u : 0u;
            if (journal == null)
            {
                CapstanException.Check(Native.capstan_registry_set_journal(reg, IntPtr.Zero, flags));
            }
            else
            {
                // Not freed meanwhile: Dispose takes the same lock.
                lock (journal) CapstanException.Check(Native.capstan_registry_set_journal(reg, journal.Live(), flags));
            }
            GC.KeepAlive(handle);
        }
    }
}
