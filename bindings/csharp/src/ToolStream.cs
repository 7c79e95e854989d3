using System;
using System.Runtime.InteropServices;
using System.Threading;

namespace Capstan
{
    /// <summary>A streamed model response read as it arrives
    /// (<see cref="Registry.OpenStream"/>): text deltas go to the text
    /// handler, and with <see cref="ExecOptions.EarlyDispatch"/> each call
    /// starts the moment its arguments are complete. Feed it the body's
    /// bytes (server-sent events) from one thread, then <see cref="Finish"/>.</summary>
    public sealed class ToolStream : IDisposable
    {
        internal sealed class Sink : IResultSink
        {
            internal Action<string> Text;
            internal Action<ToolResult> Result;

            internal void OnText(string text)
            {
                if (Text != null) Text(text);
            }

            public void OnResult(ToolResult r)
            {
                if (Result != null) Result(r);
            }

            public void OnDone()
            {
            }
        }

        private IntPtr stream;
        private IntPtr userData;
        private int disposed;

        internal ToolStream(IntPtr stream, IntPtr userData)
        {
            this.stream = stream;
            this.userData = userData;
        }

        private IntPtr Live()
        {
            if (stream == IntPtr.Zero) throw new ObjectDisposedException("ToolStream");
            return stream;
        }

        /// <summary>The next bytes of the body, split anywhere. Throws
        /// <see cref="CapstanException"/>, sticky, for a provider error event
        /// (<c>PROVIDER_ERROR</c>), a body that is not the format's
        /// (<c>INVALID_RESPONSE</c>) or one past 16 MiB held; calls already
        /// started keep running.</summary>
        public void Feed(byte[] bytes, int offset, int count)
        {
            if (bytes == null) throw new ArgumentNullException("bytes");
            if (offset < 0 || count < 0 || offset + count > bytes.Length) throw new ArgumentOutOfRangeException("count");
            var b = bytes;
            if (offset != 0 || count != bytes.Length)
            {
                b = new byte[count];
                Buffer.BlockCopy(bytes, offset, b, 0, count);
            }
            CapstanException.Check(Native.capstan_stream_feed(Live(), b, (UIntPtr)count));
        }

        /// <summary><see cref="Feed(byte[], int, int)"/> of text (UTF-8).</summary>
        public void Feed(string text)
        {
            var b = Capstan.Text.Bytes(text);
            Feed(b, 0, b.Length);
        }

        /// <summary>The body ended: starts the calls not started yet, waits for
        /// every result, and returns JSON <c>{"calls","results","messages",
        /// "text","stop_reason","cancelled","cut_calls"}</c> (<c>messages</c>:
        /// what to append to the conversation). No handler of the stream runs
        /// after it returns. Once only.</summary>
        public string Finish()
        {
            IntPtr json;
            UIntPtr len;
            int status = Native.capstan_stream_finish(Live(), out json, out len);
            CapstanException.Check(status);
            return Capstan.Text.Take(json, len);
        }

        /// <summary>No call starts any more; running calls see
        /// <see cref="ToolCall.IsCancelled"/>. Any thread, also a handler.</summary>
        public void Cancel()
        {
            var s = stream;
            if (s != IntPtr.Zero) Native.capstan_stream_cancel(s);
        }

        /// <summary>Frees the stream (not while a feed or finish runs); calls
        /// still running finish internally, and no handler runs once this returns.</summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref disposed, 1) != 0) return;
            var s = stream;
            stream = IntPtr.Zero;
            if (s != IntPtr.Zero) Native.capstan_stream_free(s);
            if (userData != IntPtr.Zero) Callbacks.Release(userData);
            userData = IntPtr.Zero;
            GC.SuppressFinalize(this);
        }

        ~ToolStream()
        {
            Dispose();
        }
    }

    public sealed partial class Registry
    {
        /// <summary>Starts reading a streamed response in <paramref name="format"/>
        /// (OpenAI Chat or Responses, Anthropic, Gemini's
        /// <c>alt=sse</c>). <paramref name="onText"/> gets the model's text as
        /// it streams (on the feeding thread); <paramref name="onResult"/> each
        /// result as its call ends (on a capstan thread for a call started
        /// early). Dispose the stream after <see cref="ToolStream.Finish"/>.</summary>
        public ToolStream OpenStream(Format format, ExecOptions options = null,
                                     Action<string> onText = null, Action<ToolResult> onResult = null)
        {
            var ud = Callbacks.Hold(new ToolStream.Sink { Text = onText, Result = onResult });
            var sink = new Native.StreamSink
            {
                StructSize = (uint)Marshal.SizeOf(typeof(Native.StreamSink)),
                OnText = Callbacks.TextPtr,
                OnResult = Callbacks.ResultPtr,
                UserData = ud,
            };
            IntPtr p;
            int status;
            using (var opts = new NativeExec(options))
            {
                status = Native.capstan_stream_new(Live(), (uint)format, ref opts.Value, ref sink, out p);
                GC.KeepAlive(handle);
            }
            if (status != Native.Ok)
            {
                Callbacks.Release(ud);
                CapstanException.Check(status);
            }
            return new ToolStream(p, ud);
        }
    }
}
