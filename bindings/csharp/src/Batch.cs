using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace Capstan
{
    /// <summary>Where a batch's results are handed to the host.</summary>
    public enum Delivery
    {
        /// <summary>On the thread that finished the call (a capstan thread),
        /// as each finishes.</summary>
        AnyThread,
        /// <summary>Queued, and handed over on the thread that calls
        /// <see cref="Batch.Poll"/> (a game loop's <c>Update()</c>).</summary>
        Poll,
    }

    public sealed partial class Registry
    {
        /// <summary>Starts running calls (normalized JSON, as for
        /// <see cref="Execute"/>) and returns at once. Each result goes to
        /// <paramref name="onResult"/> as its call finishes (on a capstan
        /// thread, or with <see cref="Delivery.Poll"/> in
        /// <see cref="Batch.Poll"/>), and <see cref="Batch.Completion"/> ends
        /// with all of them in call order. <paramref name="cancellation"/>
        /// cancels the batch: calls not started end <c>cancelled</c>,
        /// running ones see <see cref="ToolCall.IsCancelled"/>. Dispose the
        /// batch when done (a batch still running finishes internally).</summary>
        public Batch Submit(string callsJson, ExecOptions options = null, Action<ToolResult> onResult = null,
                            Delivery delivery = Delivery.AnyThread, CancellationToken cancellation = default(CancellationToken))
        {
            var b = Text.Bytes(callsJson);
            var state = new Batch.State(onResult);
            var userData = Callbacks.Hold(state);
            IntPtr p;
            int status;
            using (var opts = new NativeExec(options, delivery == Delivery.Poll ? Native.ExecDeliverPoll : 0))
            {
                status = Native.capstan_batch_submit(Live(), b, (UIntPtr)b.Length, ref opts.Value,
                    delivery == Delivery.Poll ? IntPtr.Zero : Callbacks.ResultPtr, userData, out p);
                GC.KeepAlive(handle);
            }
            if (status != Native.Ok)
            {
                Callbacks.Release(userData);
                CapstanException.Check(status);
            }
            return new Batch(p, state, userData, delivery, cancellation);
        }

        /// <summary>Runs calls without blocking the caller and without
        /// holding a thread while they run: the task ends with every result,
        /// in call order. <paramref name="cancellation"/> cancels the calls
        /// (see <see cref="Submit"/>); the task still ends with their
        /// results, the cancelled ones <c>cancelled</c>. A UI or game thread
        /// keeps pumping (<see cref="Pump"/>) for its main-thread tools.</summary>
        public Task<ToolResult[]> ExecuteAsync(string callsJson, ExecOptions options = null,
                                               CancellationToken cancellation = default(CancellationToken))
        {
            var batch = Submit(callsJson, options, null, Delivery.AnyThread, cancellation);
            return batch.Completion.ContinueWith(t =>
            {
                batch.Dispose();
                return t.Result;
            }, TaskContinuationOptions.ExecuteSynchronously);
        }
    }

    internal sealed class BatchHandle : SafeHandle
    {
        internal BatchHandle(IntPtr p) : base(IntPtr.Zero, true)
        {
            SetHandle(p);
        }

        public override bool IsInvalid
        {
            get { return handle == IntPtr.Zero; }
        }

        protected override bool ReleaseHandle()
        {
            Native.capstan_batch_free(handle);
            return true;
        }
    }

    /// <summary>Calls running in the background (<see cref="Registry.Submit"/>).</summary>
    public sealed class Batch : IDisposable
    {
        internal sealed class State : IResultSink
        {
            private readonly Action<ToolResult> onResult;
            private readonly List<ToolResult> results = new List<ToolResult>();
            internal readonly TaskCompletionSource<ToolResult[]> Done =
                new TaskCompletionSource<ToolResult[]>(TaskCreationOptions.RunContinuationsAsynchronously);
            internal Exception Failure;

            internal State(Action<ToolResult> onResult)
            {
                this.onResult = onResult;
            }

            public void OnResult(ToolResult r)
            {
                lock (results) results.Add(r);
                if (onResult == null) return;
                try
                {
                    onResult(r);
                }
                catch (Exception e)
                {
                    // Kept for Completion: a host's handler must not reach native code.
                    lock (results) if (Failure == null) Failure = e;
                }
            }

            public void OnDone()
            {
                ToolResult[] all;
                lock (results)
                {
                    all = results.ToArray();
                }
                Array.Sort(all, (a, b) => a.Index.CompareTo(b.Index));
                if (Failure != null) Done.TrySetException(Failure);
                else Done.TrySetResult(all);
            }
        }

        private readonly BatchHandle handle;
        private readonly State state;
        private IntPtr userData;
        private readonly Delivery delivery;
        private readonly CancellationTokenRegistration registration;

        internal Batch(IntPtr p, State state, IntPtr userData, Delivery delivery, CancellationToken cancellation)
        {
            handle = new BatchHandle(p);
            this.state = state;
            this.userData = userData;
            this.delivery = delivery;
            if (delivery == Delivery.AnyThread)
            {
                // After the final callback no callback of the batch comes: release its GCHandle then.
                state.Done.Task.ContinueWith(t => ReleaseUserData(), TaskContinuationOptions.ExecuteSynchronously);
            }
            if (cancellation.CanBeCanceled)
                registration = cancellation.Register(o => ((Batch)o).Cancel(), this);
        }

        /// <summary>Ends with every result in call order, once the last was
        /// handed over (a handler's exception faults it).</summary>
        public Task<ToolResult[]> Completion
        {
            get { return state.Done.Task; }
        }

        /// <summary>Cancels the batch: calls not yet started end
        /// <c>cancelled</c>; running calls see <see cref="ToolCall.IsCancelled"/>
        /// and still deliver their own result. Any thread; after
        /// <see cref="Dispose"/> a no-op.</summary>
        public void Cancel()
        {
            bool added = false;
            try
            {
                handle.DangerousAddRef(ref added);
                Native.capstan_batch_cancel(handle.DangerousGetHandle());
            }
            catch (ObjectDisposedException)
            {
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
        }

        /// <summary>Blocks until every result was handed over, up to
        /// <paramref name="timeoutMs"/> (-1: no limit); true when done.
        /// Not from inside the batch's own result handler.</summary>
        public bool Wait(int timeoutMs = -1)
        {
            bool added = false;
            try
            {
                handle.DangerousAddRef(ref added);
                uint t = timeoutMs < 0 ? uint.MaxValue : (uint)timeoutMs;
                return Native.capstan_batch_wait(handle.DangerousGetHandle(), t) == Native.Ok;
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
        }

        /// <summary><see cref="Delivery.Poll"/>: hands up to <paramref name="max"/>
        /// queued results to the batch's handler on this thread, oldest
        /// first (and ends <see cref="Completion"/> after the last). Returns
        /// how many. Call it from the game loop.</summary>
        public int Poll(int max = int.MaxValue)
        {
            if (delivery != Delivery.Poll) throw new InvalidOperationException("Poll is for a batch submitted with Delivery.Poll");
            if (handle.IsClosed) throw new ObjectDisposedException("Batch");
            var ud = userData;
            if (ud == IntPtr.Zero) return 0;
            int n = (int)(ulong)Native.capstan_batch_poll(handle.DangerousGetHandle(), Callbacks.ResultPtr, ud, (UIntPtr)(uint)Math.Max(0, max));
            if (state.Done.Task.IsCompleted) ReleaseUserData();
            return n;
        }

        private void ReleaseUserData()
        {
            var ud = Interlocked.Exchange(ref userData, IntPtr.Zero);
            if (ud != IntPtr.Zero) Callbacks.Release(ud);
        }

        /// <summary>Frees the batch; one still running finishes its calls
        /// internally, and no handler of it runs once this returns
        /// (<see cref="Completion"/>, if not yet done, ends cancelled).</summary>
        public void Dispose()
        {
            registration.Dispose();
            handle.Dispose();
            // capstan_batch_free returned: no callback of the batch runs any more.
            ReleaseUserData();
            // Freed before its last result was handed over: no result will come.
            state.Done.TrySetCanceled();
        }
    }
}
