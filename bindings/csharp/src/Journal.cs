using System;
using System.Runtime.InteropServices;

namespace Capstan
{
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
