using System;
using System.Collections.Generic;
using System.Text;

namespace Capstan
{
    /// <summary>A batch through capstan's host batches (<c>capstan_host_batch_*</c>):
    /// the checked calls of quick tools (<see cref="ToolFlags.Quick"/>) come
    /// out in one buffer, run here on the calling thread in call order, and
    /// their answers go back in one: two crossings per batch, no callback into
    /// managed code per call and no thread hop. The batch's other tools run
    /// on capstan's pool meanwhile.</summary>
    internal static class HostBatch
    {
        /// <summary>Runs the batch; the results JSON of <c>capstan_registry_execute</c>.</summary>
        internal static string Execute(IntPtr reg, byte[] calls, ref Native.ExecOptions opts, Dictionary<string, Callbacks.Entry> quick)
        {
            IntPtr batch, handed;
            UIntPtr handedLen;
            CapstanException.Check(Native.capstan_host_batch_begin(reg, calls, (UIntPtr)calls.Length, ref opts, out batch, out handed, out handedLen));
            try
            {
                var answers = Text.Bytes(Answer(Text.FromUtf8(handed, (int)(ulong)handedLen), quick));
                IntPtr results;
                UIntPtr resultsLen;
                CapstanException.Check(Native.capstan_host_batch_finish(batch, answers, (UIntPtr)answers.Length, uint.MaxValue, out results, out resultsLen));
                return Text.FromUtf8(results, (int)(ulong)resultsLen);
            }
            finally
            {
                // Handed-out calls never answered (an exception here) end cancelled.
                Native.capstan_host_batch_free(batch);
            }
        }

        /// <summary>Runs every handed-out call (<c>[{"index","id","name","arguments"}]</c>); the answers array.</summary>
        internal static string Answer(string handed, Dictionary<string, Callbacks.Entry> quick)
        {
            if (handed == "[]") return "[]";
            var sb = new StringBuilder("[");
            int i = 0;
            Json.Space(handed, ref i);
            if (i >= handed.Length || handed[i] != '[') throw new FormatException("capstan handed out no array");
            i++;
            bool first = true;
            while (true)
            {
                Json.Space(handed, ref i);
                if (handed[i] == ']') break;
                if (handed[i] == ',') { i++; continue; }
                long index = -1;
                string id = null, name = null, args = null;
                object parsed = null;
                i++; // '{'
                while (true)
                {
                    Json.Space(handed, ref i);
                    if (handed[i] == '}') { i++; break; }
                    if (handed[i] == ',') { i++; continue; }
                    var key = Json.Str(handed, ref i);
                    Json.Space(handed, ref i);
                    i++; // ':'
                    Json.Space(handed, ref i);
                    int start = i;
                    var v = Json.Value(handed, ref i, 0);
                    switch (key)
                    {
                        case "index": index = (long)v; break;
                        case "id": id = (string)v; break;
                        case "name": name = (string)v; break;
                        case "arguments": parsed = v; args = handed.Substring(start, i - start); break;
                    }
                }
                if (!first) sb.Append(',');
                first = false;
                sb.Append("{\"index\":").Append(index).Append(',');
                Run(sb, new ToolCall(args, parsed, id, name), quick);
                sb.Append('}');
            }
            return sb.Append(']').ToString();
        }

        /// <summary>Appends the call's answer: <c>"text"</c>, <c>"json"</c>, <c>"parts"</c> or <c>"error"</c>.</summary>
        private static void Run(StringBuilder sb, ToolCall call, Dictionary<string, Callbacks.Entry> quick)
        {
            Callbacks.Entry entry;
            lock (quick)
            {
                quick.TryGetValue(call.Name, out entry);
            }
            Callbacks.Reply reply;
            try
            {
                if (entry == null) throw new InvalidOperationException("tool \"" + call.Name + "\" is quick but has no handler in this registry");
                reply = entry.Sync(call);
                if (reply.Kind != Native.ContentText && !reply.Trusted) Json.Parse(reply.Text ?? "");
            }
            catch (Exception e)
            {
                sb.Append("\"error\":").Append(Text.JsonString(Callbacks.Describe(e, "a quick tool's caller cannot be asked")));
                return;
            }
            if (reply.Kind == Native.ContentText) sb.Append("\"text\":").Append(Text.JsonString(reply.Text ?? ""));
            else sb.Append(reply.Kind == Native.ContentJson ? "\"json\":" : "\"parts\":").Append(reply.Text);
        }
    }
}
