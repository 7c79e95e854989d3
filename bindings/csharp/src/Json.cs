using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Capstan
{
    /// <summary>The binding's own JSON reader, for capstan's output and a
    /// tool's arguments (no dependency forced on a Unity project): objects
    /// become <c>Dictionary&lt;string, object&gt;</c>, arrays
    /// <c>List&lt;object&gt;</c>, numbers <c>double</c> (or <c>long</c> when
    /// integral and in range), then <c>string</c>, <c>bool</c> and <c>null</c>.
    /// Nesting is bounded (128 levels, as capstan's own parser).</summary>
    public static class Json
    {
        private const int MaxDepth = 128;

        /// <summary>Parses JSON text; <see cref="FormatException"/> naming the
        /// offset of what is wrong.</summary>
        public static object Parse(string text)
        {
            if (text == null) throw new ArgumentNullException("text");
            int i = 0;
            var v = Value(text, ref i, 0);
            Space(text, ref i);
            if (i != text.Length) throw Bad(text, i, "text after the value");
            return v;
        }

        private static FormatException Bad(string s, int i, string what)
        {
            return new FormatException("JSON: " + what + " at offset " + i);
        }

        internal static void Space(string s, ref int i)
        {
            while (i < s.Length && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
        }

        internal static object Value(string s, ref int i, int depth)
        {
            if (depth > MaxDepth) throw Bad(s, i, "nesting deeper than 128 levels");
            Space(s, ref i);
            if (i >= s.Length) throw Bad(s, i, "a value expected");
            char c = s[i];
            if (c == '{') return Obj(s, ref i, depth);
            if (c == '[') return Arr(s, ref i, depth);
            if (c == '"') return Str(s, ref i);
            if (Word(s, ref i, "true")) return true;
            if (Word(s, ref i, "false")) return false;
            if (Word(s, ref i, "null")) return null;
            return Num(s, ref i);
        }

        private static bool Word(string s, ref int i, string w)
        {
            if (string.CompareOrdinal(s, i, w, 0, w.Length) != 0) return false;
            i += w.Length;
            return true;
        }

        private static Dictionary<string, object> Obj(string s, ref int i, int depth)
        {
            var d = new Dictionary<string, object>();
            i++;
            Space(s, ref i);
            if (i < s.Length && s[i] == '}') { i++; return d; }
            while (true)
            {
                Space(s, ref i);
                if (i >= s.Length || s[i] != '"') throw Bad(s, i, "a member name expected");
                var k = Str(s, ref i);
                Space(s, ref i);
                if (i >= s.Length || s[i] != ':') throw Bad(s, i, "':' expected");
                i++;
                d[k] = Value(s, ref i, depth + 1);
                Space(s, ref i);
                if (i < s.Length && s[i] == ',') { i++; continue; }
                if (i < s.Length && s[i] == '}') { i++; return d; }
                throw Bad(s, i, "',' or '}' expected");
            }
        }

        private static List<object> Arr(string s, ref int i, int depth)
        {
            var l = new List<object>();
            i++;
            Space(s, ref i);
            if (i < s.Length && s[i] == ']') { i++; return l; }
            while (true)
            {
                l.Add(Value(s, ref i, depth + 1));
                Space(s, ref i);
                if (i < s.Length && s[i] == ',') { i++; continue; }
                if (i < s.Length && s[i] == ']') { i++; return l; }
                throw Bad(s, i, "',' or ']' expected");
            }
        }

        internal static string Str(string s, ref int i)
        {
            // Most strings have no escape: one Substring.
            for (int j = i + 1; j < s.Length; j++)
            {
                char c = s[j];
                if (c == '"')
                {
                    var plain = s.Substring(i + 1, j - i - 1);
                    i = j + 1;
                    return plain;
                }
                if (c == '\\') break;
            }
            var sb = new StringBuilder();
            i++;
            while (true)
            {
                if (i >= s.Length) throw Bad(s, i, "an unterminated string");
                char c = s[i++];
                if (c == '"') return sb.ToString();
                if (c != '\\') { sb.Append(c); continue; }
                if (i >= s.Length) throw Bad(s, i, "an unterminated escape");
                char e = s[i++];
                switch (e)
                {
                    case '"': sb.Append('"'); break;
                    case '\\': sb.Append('\\'); break;
                    case '/': sb.Append('/'); break;
                    case 'b': sb.Append('\b'); break;
                    case 'f': sb.Append('\f'); break;
                    case 'n': sb.Append('\n'); break;
                    case 'r': sb.Append('\r'); break;
                    case 't': sb.Append('\t'); break;
                    case 'u':
                        int code;
                        if (i + 4 > s.Length || !int.TryParse(s.Substring(i, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out code))
                            throw Bad(s, i, "a bad \\u escape");
                        sb.Append((char)code);
                        i += 4;
                        break;
                    default: throw Bad(s, i - 1, "an unknown escape");
                }
            }
        }

        private static object Num(string s, ref int i)
        {
            int start = i;
            bool integral = true;
            while (i < s.Length && "+-0123456789.eE".IndexOf(s[i]) >= 0)
            {
                if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') integral = false;
                i++;
            }
            if (i == start) throw Bad(s, i, "a value expected");
            // Small integers (most arguments) without a Substring.
            if (integral && i - start <= 18)
            {
                int k = start;
                bool negative = s[k] == '-';
                if (negative || s[k] == '+') k++;
                if (k < i)
                {
                    long v = 0;
                    for (; k < i && s[k] >= '0' && s[k] <= '9'; k++) v = v * 10 + (s[k] - '0');
                    if (k == i) return negative ? -v : v;
                }
            }
            var t = s.Substring(start, i - start);
            long l;
            if (integral && long.TryParse(t, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out l))
                return l;
            double d;
            if (!double.TryParse(t, NumberStyles.Float, CultureInfo.InvariantCulture, out d)) throw Bad(s, start, "a bad number");
            return d;
        }
    }
}
