using System;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using AOT;

namespace Capstan
{
    /// <summary>Where a batch's or a stream's results go (held by a GCHandle
    /// that is the native <c>user_data</c>).</summary>
    internal interface IResultSink
    {
        void OnResult(ToolResult result);
        /// <summary>The final <c>result == NULL</c> callback: no more will come.</summary>
        void OnDone();
    }

    /// <summary>The static thunks capstan calls (IL2CPP's rule: static,
    /// [MonoPInvokeCallback], no delegate to a lambda or an instance method
    /// ever handed to native code). Each finds what it serves through
    /// <c>user_data</c>, a GCHandle made by <see cref="Hold"/>.</summary>
    [Preserve]
    internal static class Callbacks
    {
        /// <summary>What a tool answered: its content and its kind (<c>CAPSTAN_CONTENT_*</c>).</summary>
        internal struct Reply
        {
            /// <summary>Text, or JSON the binding wrote itself (a JSON adapter's).</summary>
            internal Reply(string text, bool json)
            {
                Text = text;
                Kind = json ? Native.ContentJson : Native.ContentText;
                Trusted = true;
            }

            /// <summary>Content the tool wrote: JSON or parts checked before they join a host batch's answers.</summary>
            internal Reply(string text, uint kind)
            {
                Text = text;
                Kind = kind;
                Trusted = false;
            }

            internal readonly string Text;
            internal readonly uint Kind;
            internal readonly bool Trusted;
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
        private static readonly Native.ResultFn ResultThunk = OnResult;
        private static readonly Native.ApproverFn ApproverThunk = OnApproval;
        private static readonly Native.EventFn EventThunk = OnEvent;
        private static readonly Native.NotifyFn NotifyThunk = OnNotify;
        private static readonly Native.TextFn TextThunk = OnText;
        internal static readonly IntPtr ToolPtr = Marshal.GetFunctionPointerForDelegate(ToolThunk);
        internal static readonly IntPtr DestroyPtr = Marshal.GetFunctionPointerForDelegate(DestroyThunk);
        internal static readonly IntPtr ResultPtr = Marshal.GetFunctionPointerForDelegate(ResultThunk);
        internal static readonly IntPtr ApproverPtr = Marshal.GetFunctionPointerForDelegate(ApproverThunk);
        internal static readonly IntPtr EventPtr = Marshal.GetFunctionPointerForDelegate(EventThunk);
        internal static readonly IntPtr NotifyPtr = Marshal.GetFunctionPointerForDelegate(NotifyThunk);
        internal static readonly IntPtr TextPtr = Marshal.GetFunctionPointerForDelegate(TextThunk);

        /// <summary>GCHandles made by <see cref="Hold"/> and not yet released.</summary>
        internal static int Live;

        /// <summary>A GCHandle for <paramref name="target"/>, as <c>user_data</c>;
        /// released by <see cref="Release"/> (or capstan's destroy).</summary>
        internal static IntPtr Hold(object target)
        {
            var h = GCHandle.Alloc(target);
            Interlocked.Increment(ref Live);
            return GCHandle.ToIntPtr(h);
        }

        internal static void Release(IntPtr userData)
        {
            GCHandle.FromIntPtr(userData).Free();
            Interlocked.Decrement(ref Live);
        }

        private static T Target<T>(IntPtr userData) where T : class
        {
            return (T)GCHandle.FromIntPtr(userData).Target;
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.ToolFn))]
        private static void OnCall(IntPtr userData, IntPtr call)
        {
            // Nothing may escape into native code: every failure completes the call.
            try
            {
                var entry = Target<Entry>(userData);
                UIntPtr n;
                var args = Text.FromUtf8(Native.capstan_call_arguments(call, out n), (int)(ulong)n);
                // Id and name are read when a sync tool asks (most never do).
                var tc = new ToolCall(args, call);
                if (entry.Sync != null)
                {
                    Return(call, entry.Sync(tc));
                    return;
                }
                // A task may read them after the call completed: read them now.
                if (tc.Id == null || tc.Name == null) throw new InvalidOperationException("the call's handle is not live");
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
                Fail(call, e);
            }
        }

        private static void Finish(IntPtr call, Task<Reply> t)
        {
            try
            {
                if (t.IsFaulted) Fail(call, t.Exception.GetBaseException());
                else if (t.IsCanceled) Fail(call, "the tool's task was cancelled");
                else Return(call, t.Result);
            }
            catch (Exception e)
            {
                Fail(call, e);
            }
        }

        /// <summary>Ends the call for the tool's exception: asking its caller
        /// for input (<see cref="InputRequiredException"/>), else a tool error.</summary>
        private static void Fail(IntPtr call, Exception e)
        {
            var asked = e as InputRequiredException;
            if (asked == null)
            {
                Fail(call, Describe(e));
                return;
            }
            var refused = asked.Ask(call);
            if (refused != null) Fail(call, asked.Message + ": " + refused);
        }

        /// <summary>A tool's exception as the model reads it, when the call
        /// cannot ask its caller for input (<paramref name="whyNotAsked"/>).</summary>
        internal static string Describe(Exception e, string whyNotAsked)
        {
            if (e is InputRequiredException) return e.Message + ": " + whyNotAsked;
            if (e is FormatException) return "the tool's content is not JSON: " + e.Message;
            return Describe(e);
        }

        private static string Describe(Exception e)
        {
            return e.GetType().Name + ": " + e.Message;
        }

        private static void Return(IntPtr call, Reply reply)
        {
            var b = Text.Bytes(reply.Text ?? "");
            // INVALID_CONTENT (parts that fail capstan's checks) already completed the call as a tool error saying why.
            Native.capstan_call_return(call, reply.Kind, b, (UIntPtr)b.Length);
        }

        private static void Fail(IntPtr call, string message)
        {
            var b = Text.Bytes(message);
            Native.capstan_call_fail(call, b, (UIntPtr)b.Length);
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.DestroyFn))]
        private static void OnDestroy(IntPtr userData)
        {
            try
            {
                Release(userData);
            }
            catch (Exception)
            {
                // capstan calls destroy once; never throw into native code.
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.ResultFn))]
        private static void OnResult(IntPtr userData, IntPtr result)
        {
            try
            {
                var sink = Target<IResultSink>(userData);
                if (result == IntPtr.Zero) sink.OnDone();
                else sink.OnResult(ToolResult.FromNative(result));
            }
            catch (Exception e)
            {
                Hooks.Unhandled(e);
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.ApproverFn))]
        private static void OnApproval(IntPtr userData, IntPtr approval)
        {
            Approval a = null;
            try
            {
                a = new Approval(approval);
                Target<Action<Approval>>(userData)(a);
            }
            catch (Exception e)
            {
                // An approver that throws denies, saying why: the call must not wait forever.
                if (a != null) a.TryDeny("the approver failed: " + Describe(e));
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.EventFn))]
        private static void OnEvent(IntPtr userData, IntPtr evt)
        {
            try
            {
                Target<Action<ToolEvent>>(userData)(ToolEvent.FromNative(evt));
            }
            catch (Exception e)
            {
                Hooks.Unhandled(e);
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.NotifyFn))]
        private static void OnNotify(IntPtr userData)
        {
            try
            {
                Target<Action>(userData)();
            }
            catch (Exception e)
            {
                Hooks.Unhandled(e);
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.TextFn))]
        private static void OnText(IntPtr userData, IntPtr text, UIntPtr len)
        {
            try
            {
                Target<ToolStream.Sink>(userData).OnText(Text.FromUtf8(text, (int)(ulong)len));
            }
            catch (Exception e)
            {
                Hooks.Unhandled(e);
            }
        }
    }
}
