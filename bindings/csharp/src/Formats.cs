using System;
using System.Collections.Generic;

namespace Capstan
{
    /// <summary>What <see cref="Formats.CheckHistory"/> found.</summary>
    public sealed class HistoryReport
    {
        /// <summary>True when the history breaks none of the format's rules.</summary>
        public bool Ok { get; internal set; }
        /// <summary>The report, JSON: <c>{"ok","findings":[{"kind","entry","call_id","message","repair"?}]}</c>.</summary>
        public string ReportJson { get; internal set; }
        /// <summary>Each finding's <c>kind</c> (<c>missing_result</c>, <c>orphan_result</c>, ...), in order.</summary>
        public string[] Kinds { get; internal set; }
        /// <summary>With repair: the repaired history, in the shape it came in; else null.</summary>
        public string RepairedJson { get; internal set; }
    }

    /// <summary>Provider formats as data in and data out: no registry, any thread.</summary>
    public static class Formats
    {
        /// <summary>The calls of a provider's response, normalized
        /// (<c>[{"id","name","arguments"}]</c>). A provider error body throws
        /// <see cref="CapstanException"/> (<c>CAPSTAN_ERR_PROVIDER_ERROR</c>,
        /// its kind in <see cref="CapstanException.ProviderKind"/>).</summary>
        public static string ParseCalls(Format format, string responseJson)
        {
            var b = Text.Bytes(responseJson);
            IntPtr outp;
            UIntPtr len;
            CapstanException.Check(Native.capstan_format_parse_calls((uint)format, b, (UIntPtr)b.Length, out outp, out len));
            return Text.Take(outp, len);
        }

        /// <summary>Normalized results (as <see cref="Registry.ExecuteJson"/>
        /// returns them) as the messages or items <paramref name="format"/> takes next.</summary>
        public static string WriteResults(Format format, string resultsJson)
        {
            var b = Text.Bytes(resultsJson);
            IntPtr outp;
            UIntPtr len;
            CapstanException.Check(Native.capstan_format_write_results((uint)format, b, (UIntPtr)b.Length, out outp, out len));
            return Text.Take(outp, len);
        }

        /// <summary>Checks a conversation against the format's rules for tool
        /// calls and results (a result per call, in place, ids legal and
        /// unique) and, with <paramref name="repair"/>, repairs it.
        /// <paramref name="geminiSignatures"/>: require Gemini 3's thought
        /// signatures. Throws <see cref="CapstanException"/>
        /// (<c>CAPSTAN_ERR_INVALID_ARGUMENT</c>) for text that is not a
        /// history, naming the entry.</summary>
        public static HistoryReport CheckHistory(Format format, string historyJson, bool repair = false, bool geminiSignatures = false)
        {
            var b = Text.Bytes(historyJson);
            uint flags = (repair ? 1u : 0u) | (geminiSignatures ? 2u : 0u);
            IntPtr report, repaired;
            UIntPtr reportLen, repairedLen;
            CapstanException.Check(Native.capstan_format_check_history((uint)format, b, (UIntPtr)b.Length, flags,
                out report, out reportLen, out repaired, out repairedLen));
            var r = new HistoryReport { ReportJson = Text.Take(report, reportLen) };
            if (repair) r.RepairedJson = Text.Take(repaired, repairedLen);
            var d = (Dictionary<string, object>)Json.Parse(r.ReportJson);
            r.Ok = (bool)d["ok"];
            var findings = (List<object>)d["findings"];
            r.Kinds = new string[findings.Count];
            for (int i = 0; i < findings.Count; i++) r.Kinds[i] = (string)((Dictionary<string, object>)findings[i])["kind"];
            return r;
        }
    }
}
