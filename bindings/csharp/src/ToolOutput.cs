using System;
using System.Text;

namespace Capstan
{
    /// <summary>What a tool returns when plain text is not enough: JSON, or
    /// content parts (MCP content blocks: text, images, audio, files), which
    /// each provider format renders as it takes them. Return it from a
    /// <see cref="ToolAttribute"/> method or an
    /// <see cref="Registry.AddTool(string, string, string, Func{ToolCall, ToolOutput}, ToolFlags, uint, string)"/> handler.</summary>
    public sealed class ToolOutput
    {
        internal readonly Callbacks.Reply Reply;

        private ToolOutput(string content, uint kind)
        {
            if (content == null) throw new ArgumentNullException("content");
            Reply = new Callbacks.Reply(content, kind);
        }

        /// <summary>Text the model reads as it is.</summary>
        public static ToolOutput Text(string text)
        {
            return new ToolOutput(text, Native.ContentText);
        }

        /// <summary>JSON text (checked by capstan; a tool error if it is not JSON).</summary>
        public static ToolOutput Json(string json)
        {
            return new ToolOutput(json, Native.ContentJson);
        }

        /// <summary>Content parts: JSON of an array of MCP content blocks, or of
        /// <c>{"content":[...],"structuredContent":{...}}</c>. Parts that fail
        /// capstan's checks (bad base64, an unknown MIME type) end the call as
        /// a tool error naming the part.</summary>
        public static ToolOutput Parts(string partsJson)
        {
            return new ToolOutput(partsJson, Native.ContentParts);
        }

        /// <summary>An image (e.g. a screenshot of the game), with a caption.</summary>
        public static ToolOutput Image(byte[] data, string mimeType, string caption = null)
        {
            if (data == null) throw new ArgumentNullException("data");
            if (mimeType == null) throw new ArgumentNullException("mimeType");
            var sb = new StringBuilder("[");
            if (caption != null) sb.Append("{\"type\":\"text\",\"text\":").Append(Capstan.Text.JsonString(caption)).Append("},");
            sb.Append("{\"type\":\"image\",\"data\":\"").Append(Convert.ToBase64String(data))
              .Append("\",\"mimeType\":").Append(Capstan.Text.JsonString(mimeType)).Append("}]");
            return Parts(sb.ToString());
        }
    }

    /// <summary>capstan's own threads, process-wide.</summary>
    public static class CapstanRuntime
    {
        /// <summary>Caps capstan's pool threads (0 = 256) and sets how long an
        /// idle one waits before it ends (0 = 10 s); any time.</summary>
        public static void Configure(uint threads = 0, uint keepAliveMs = 0)
        {
            var o = new Native.RuntimeOptions
            {
                StructSize = (uint)System.Runtime.InteropServices.Marshal.SizeOf(typeof(Native.RuntimeOptions)),
                Threads = threads,
                KeepAliveMs = keepAliveMs,
            };
            CapstanException.Check(Native.capstan_runtime_configure(ref o));
        }

        /// <summary>Stops and joins every thread capstan started, waiting up to
        /// <paramref name="timeoutMs"/> for what still runs. True when none is
        /// left; false naming what still runs in <see cref="LastShutdownProblem"/>.
        /// capstan starts threads again when next needed. Call it before the
        /// Unity editor reloads scripts (<c>AssemblyReloadEvents.beforeAssemblyReload</c>),
        /// after disposing every capstan object: a capstan thread must never call
        /// into a domain that is gone. Not from inside a callback
        /// (<c>CAPSTAN_ERR_WRONG_CONTEXT</c>).</summary>
        public static bool Shutdown(uint timeoutMs = 10000)
        {
            int status = Native.capstan_runtime_shutdown(timeoutMs);
            if (status == Native.Ok)
            {
                LastShutdownProblem = null;
                return true;
            }
            if (Capstan.Text.FromNts(Native.capstan_status_name(status)) != "CAPSTAN_ERR_TIMEOUT") CapstanException.Check(status);
            LastShutdownProblem = CapstanException.LastMessage();
            return false;
        }

        /// <summary>What the last <see cref="Shutdown"/> that returned false found still running.</summary>
        public static string LastShutdownProblem { get; private set; }
    }
}
