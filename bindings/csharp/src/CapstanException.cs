using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace Capstan
{
    /// <summary>A capstan function failed: <see cref="Status"/> is the status's
    /// name (<c>CAPSTAN_ERR_INVALID_SCHEMA</c>, ...), <see cref="Exception.Message"/>
    /// capstan's message naming what was wrong.</summary>
    public class CapstanException : Exception
    {
        public CapstanException(string status, int code, string message)
            : base(status + ": " + message)
        {
            Status = status;
            Code = code;
            Detail = message;
        }

        /// <summary>The status's constant name, e.g. <c>CAPSTAN_ERR_INVALID_NAME</c>.</summary>
        public string Status { get; private set; }

        /// <summary>The status's number.</summary>
        public int Code { get; private set; }

        /// <summary>capstan's message, without the status.</summary>
        public string Detail { get; private set; }

        /// <summary>For <c>CAPSTAN_ERR_PROVIDER_ERROR</c>: the provider's error
        /// kind (e.g. <c>rate_limit_error</c>); else null.</summary>
        public string ProviderKind { get; private set; }

        /// <summary>For a provider error: the provider's own message, or null.</summary>
        public string ProviderMessage { get; private set; }

        /// <summary>For a provider error: the HTTP status its body carries, or null.</summary>
        public long? HttpStatus { get; private set; }

        /// <summary>For a provider error: the retry delay its body carries, in ms, or null.</summary>
        public long? RetryAfterMs { get; private set; }

        /// <summary>For <c>CAPSTAN_ERR_INVALID_SCHEMA</c>: the JSON Pointer of the
        /// offending place in the schema (<c>""</c> for its root); else null.</summary>
        public string SchemaPointer { get; private set; }

        /// <summary>Throws for a status other than OK, with the calling thread's
        /// last message and its structured details.</summary>
        internal static void Check(int status)
        {
            if (status == Native.Ok) return;
            var e = new CapstanException(Text.FromNts(Native.capstan_status_name(status)), status, LastMessage());
            e.ReadDetails();
            throw e;
        }

        private void ReadDetails()
        {
            IntPtr p;
            UIntPtr n;
            if (Native.capstan_error_json(out p, out n) != Native.Ok) return;
            Dictionary<string, object> d;
            try
            {
                d = Json.Parse(Text.Take(p, n)) as Dictionary<string, object>;
            }
            catch (FormatException)
            {
                return;
            }
            if (d == null) return;
            object v;
            if (d.TryGetValue("pointer", out v)) SchemaPointer = v as string;
            if (!d.TryGetValue("provider", out v)) return;
            var provider = v as Dictionary<string, object>;
            if (provider == null) return;
            if (provider.TryGetValue("kind", out v)) ProviderKind = v as string;
            if (provider.TryGetValue("message", out v)) ProviderMessage = v as string;
            if (provider.TryGetValue("http_status", out v) && v is long) HttpStatus = (long)v;
            if (provider.TryGetValue("retry_after_ms", out v) && v is long) RetryAfterMs = (long)v;
        }

        internal static string LastMessage()
        {
            var buf = new byte[512];
            ulong full = (ulong)Native.capstan_error_message(buf, (UIntPtr)buf.Length);
            if (full >= (ulong)buf.Length)
            {
                buf = new byte[full + 1];
                full = (ulong)Native.capstan_error_message(buf, (UIntPtr)buf.Length);
            }
            return Encoding.UTF8.GetString(buf, 0, (int)full);
        }
    }

    /// <summary>UTF-8 between C# strings and capstan's text.</summary>
    internal static class Text
    {
        /// <summary>NUL-terminated UTF-8 bytes of <paramref name="s"/>.</summary>
        internal static byte[] Nts(string s)
        {
            int n = Encoding.UTF8.GetByteCount(s);
            var b = new byte[n + 1];
            Encoding.UTF8.GetBytes(s, 0, s.Length, b, 0);
            return b;
        }

        internal static byte[] Bytes(string s)
        {
            if (s == null) throw new ArgumentNullException("text", "capstan takes text here, not null");
            return Encoding.UTF8.GetBytes(s);
        }

        /// <summary>A NUL-terminated UTF-8 copy in unmanaged memory (Marshal.FreeHGlobal).</summary>
        internal static IntPtr Alloc(string s)
        {
            var b = Nts(s);
            var p = Marshal.AllocHGlobal(b.Length);
            Marshal.Copy(b, 0, p, b.Length);
            return p;
        }

        internal static string FromNts(IntPtr p)
        {
            if (p == IntPtr.Zero) return null;
            int n = 0;
            while (Marshal.ReadByte(p, n) != 0) n++;
            return FromUtf8(p, n);
        }

        internal static string FromUtf8(IntPtr p, int len)
        {
            if (p == IntPtr.Zero) return null;
            if (len == 0) return "";
            var b = new byte[len];
            Marshal.Copy(p, b, 0, len);
            return Encoding.UTF8.GetString(b);
        }

        /// <summary>Text capstan returned through a <c>char **out</c>: copied, then freed.</summary>
        internal static string Take(IntPtr p, UIntPtr len)
        {
            try { return FromUtf8(p, (int)(ulong)len); }
            finally { Native.capstan_string_free(p); }
        }

        /// <summary><paramref name="s"/> as a JSON string literal.</summary>
        internal static string JsonString(string s)
        {
            var sb = new StringBuilder(s.Length + 2);
            sb.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4"));
                        else sb.Append(c);
                        break;
                }
            }
            return sb.Append('"').ToString();
        }
    }
}
