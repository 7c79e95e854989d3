using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace Capstan
{
    /// <summary>Options of an MCP server (<see cref="Registry.StartMcpServer"/>,
    /// <see cref="Registry.ServeMcpStdio"/>); null fields are capstan's defaults.</summary>
    public sealed class McpServerOptions
    {
        /// <summary>HTTP: <c>IP:PORT</c> to bind; null = loopback, a port the OS picks.</summary>
        public string Address { get; set; }
        /// <summary>HTTP: every request must carry <c>Authorization: Bearer</c> this.</summary>
        public string BearerToken { get; set; }
        /// <summary>HTTP: comma-separated browser origins accepted besides loopback ones.</summary>
        public string AllowedOrigins { get; set; }
        /// <summary>HTTP: comma-separated <c>Host</c> values accepted besides loopback ones.</summary>
        public string AllowedHosts { get; set; }
        /// <summary>JSON object, per tool name, of title, annotations, outputSchema.</summary>
        public string ToolsMetaJson { get; set; }
        /// <summary><c>serverInfo.name</c>; null = <c>capstan</c>.</summary>
        public string Name { get; set; }
        public uint MaxBodyBytes { get; set; }
        /// <summary>Bounds every call from its arrival, in ms; 0 = the tools' own timeouts.</summary>
        public uint CallTimeoutMs { get; set; }
        public uint StopTimeoutMs { get; set; }
    }

    /// <summary>Unmanaged NUL-terminated copies of strings, freed together.</summary>
    internal sealed class Strings : IDisposable
    {
        private readonly List<IntPtr> held = new List<IntPtr>();

        internal IntPtr Add(string s, string what = null)
        {
            if (s == null) return IntPtr.Zero;
            if (what != null && s.IndexOf('\0') >= 0) throw new ArgumentException(what + " must not contain NUL");
            var p = Text.Alloc(s);
            held.Add(p);
            return p;
        }

        /// <summary>A <c>const char *const *</c> of <paramref name="items"/>.</summary>
        internal IntPtr Array(string[] items, string what)
        {
            if (items == null || items.Length == 0) return IntPtr.Zero;
            var a = Marshal.AllocHGlobal(IntPtr.Size * items.Length);
            held.Add(a);
            for (int i = 0; i < items.Length; i++)
            {
                if (items[i] == null) throw new ArgumentException(what + "[" + i + "] is null");
                Marshal.WriteIntPtr(a, i * IntPtr.Size, Add(items[i]));
            }
            return a;
        }

        public void Dispose()
        {
            foreach (var p in held) Marshal.FreeHGlobal(p);
            held.Clear();
        }
    }

    /// <summary>A registry's tools served over MCP's streamable HTTP
    /// (<see cref="Registry.StartMcpServer"/>) until stopped.</summary>
    public sealed class McpServer : IDisposable
    {
        private IntPtr server;

        internal McpServer(IntPtr server)
        {
            this.server = server;
            IntPtr p;
            UIntPtr n;
            CapstanException.Check(Native.capstan_mcp_server_url(server, out p, out n));
            Url = Text.Take(p, n);
        }

        /// <summary>The endpoint, e.g. <c>http://127.0.0.1:41234/mcp</c>.</summary>
        public string Url { get; private set; }

        /// <summary>Stops accepting, cancels calls in flight and waits for
        /// them (up to the stop timeout); false when some were still running.</summary>
        public bool Stop()
        {
            if (server == IntPtr.Zero) return true;
            return Native.capstan_mcp_server_stop(server) == Native.Ok;
        }

        /// <summary>Stops the server if it runs and frees it.</summary>
        public void Dispose()
        {
            var s = System.Threading.Interlocked.Exchange(ref server, IntPtr.Zero);
            if (s != IntPtr.Zero) Native.capstan_mcp_server_free(s);
            GC.SuppressFinalize(this);
        }

        ~McpServer()
        {
            Dispose();
        }
    }

    /// <summary>Options of <see cref="McpMount.Connect"/>: exactly one of
    /// <see cref="Command"/> (a server on stdio) or <see cref="Url"/>.</summary>
    public sealed class McpMountOptions
    {
        /// <summary>The server's command line, <c>[0]</c> the program (looked up in PATH).</summary>
        public string[] Command { get; set; }
        /// <summary><c>NAME=VALUE</c> added to the child's environment.</summary>
        public string[] Environment { get; set; }
        /// <summary>The child's working directory; null = ours.</summary>
        public string WorkingDirectory { get; set; }
        /// <summary>A streamable-HTTP endpoint.</summary>
        public string Url { get; set; }
        /// <summary><c>Name: value</c> headers sent with every HTTP request.</summary>
        public string[] Headers { get; set; }
        /// <summary>Put before every remote tool's name (<c>fs_</c>: <c>read</c> becomes <c>fs_read</c>).</summary>
        public string Prefix { get; set; }
        /// <summary>0 = 10000.</summary>
        public uint ConnectTimeoutMs { get; set; }
        /// <summary>Local timeout of every mounted tool; 0 = none of its own.</summary>
        public uint CallTimeoutMs { get; set; }
        /// <summary>0 = 5; <see cref="uint.MaxValue"/> = never.</summary>
        public uint MaxReconnects { get; set; }
        public uint ReconnectBackoffMs { get; set; }
        /// <summary>null = negotiate (2026-07-28, falling back to 2025-11-25).</summary>
        public string ProtocolVersion { get; set; }
        /// <summary>OAuth 2.1 for a <see cref="Url"/> whose server asks for it; null: none.</summary>
        public McpOAuth OAuth { get; set; }
        /// <summary>The host's answers to the server's input requests (elicitation,
        /// sampling, roots) while it runs a tool; null: the mount answers nothing.</summary>
        public McpInput Input { get; set; }
    }

    /// <summary>An MCP server's tools registered in a registry
    /// (<see cref="Connect"/>) until disposed.</summary>
    public sealed class McpMount : IDisposable
    {
        private IntPtr mount;

        private McpMount(IntPtr mount)
        {
            this.mount = mount;
        }

        /// <summary>Connects (starting the command, or to the URL), lists the
        /// server's tools and registers each in <paramref name="registry"/>
        /// as prefix + remote name, its arguments validated locally like any
        /// tool's. Blocks until done. Throws <see cref="CapstanException"/>
        /// (<c>CAPSTAN_ERR_MCP_CONNECT</c>, ...) saying why it could not.</summary>
        public static McpMount Connect(Registry registry, McpMountOptions options)
        {
            if (registry == null) throw new ArgumentNullException("registry");
            if (options == null) throw new ArgumentNullException("options");
            if ((options.Command == null || options.Command.Length == 0) == (options.Url == null))
                throw new ArgumentException("set exactly one of Command and Url");
            using (var s = new Strings())
            {
                var o = new Native.McpMountOptions
                {
                    StructSize = (uint)Marshal.SizeOf(typeof(Native.McpMountOptions)),
                    Argv = s.Array(options.Command, "Command"),
                    Argc = (UIntPtr)(options.Command == null ? 0 : options.Command.Length),
                    Env = s.Array(options.Environment, "Environment"),
                    EnvCount = (UIntPtr)(options.Environment == null ? 0 : options.Environment.Length),
                    Cwd = s.Add(options.WorkingDirectory),
                    Url = s.Add(options.Url),
                    Headers = s.Array(options.Headers, "Headers"),
                    HeaderCount = (UIntPtr)(options.Headers == null ? 0 : options.Headers.Length),
                    Prefix = s.Add(options.Prefix),
                    ConnectTimeoutMs = options.ConnectTimeoutMs,
                    CallTimeoutMs = options.CallTimeoutMs,
                    MaxReconnects = options.MaxReconnects,
                    ReconnectBackoffMs = options.ReconnectBackoffMs,
                    ProtocolVersion = s.Add(options.ProtocolVersion),
                };
                var reg = registry.Live();
                // The GCHandles come last: capstan_mcp_mount_new releases them whatever it returns.
                var oauth = options.OAuth == null ? null : McpCallbacks.FillOAuth(ref o, options.OAuth, s);
                if (options.Input != null) McpCallbacks.FillInput(ref o, options.Input);
                IntPtr m;
                int status;
                McpCallbacks.InMountCall = true;
                try
                {
                    status = Native.capstan_mcp_mount_new(reg, ref o, out m);
                }
                finally
                {
                    McpCallbacks.InMountCall = false;
                }
                GC.KeepAlive(registry);
                try
                {
                    CapstanException.Check(status);
                }
                catch (CapstanException e)
                {
                    // Why the host's Authorize or Assertion refused, beside capstan's message.
                    var refusal = oauth == null ? null : oauth.Refusal;
                    if (refusal == null) throw;
                    throw new CapstanException(e.Status, e.Code, e.Detail + " (" + refusal + ")");
                }
                return new McpMount(m);
            }
        }

        /// <summary>The mount's state, JSON: <c>{"connected","tools":{local: remote},
        /// "problems","reconnects","gave_up","last_error","protocol_version","era","server"}</c>.</summary>
        public string InfoJson()
        {
            if (mount == IntPtr.Zero) throw new ObjectDisposedException("McpMount");
            IntPtr p;
            UIntPtr n;
            CapstanException.Check(Native.capstan_mcp_mount_info_json(mount, out p, out n));
            return Text.Take(p, n);
        }

        /// <summary>Unmounts: disconnects, stops the child process, unregisters
        /// the mount's tools (their calls in flight end as tool errors).</summary>
        public void Dispose()
        {
            var m = System.Threading.Interlocked.Exchange(ref mount, IntPtr.Zero);
            if (m == IntPtr.Zero) return;
            McpCallbacks.InMountCall = true;
            try
            {
                Native.capstan_mcp_mount_free(m);
            }
            finally
            {
                McpCallbacks.InMountCall = false;
            }
            GC.SuppressFinalize(this);
        }

        ~McpMount()
        {
            Dispose();
        }
    }

    public sealed partial class Registry
    {
        private static Native.McpServerOptions ServerOptions(McpServerOptions o, Strings s)
        {
            o = o ?? new McpServerOptions();
            return new Native.McpServerOptions
            {
                StructSize = (uint)Marshal.SizeOf(typeof(Native.McpServerOptions)),
                Address = s.Add(o.Address),
                BearerToken = s.Add(o.BearerToken),
                AllowedOrigins = s.Add(o.AllowedOrigins),
                AllowedHosts = s.Add(o.AllowedHosts),
                ToolsMeta = s.Add(o.ToolsMetaJson),
                Name = s.Add(o.Name),
                MaxBodyBytes = o.MaxBodyBytes,
                CallTimeoutMs = o.CallTimeoutMs,
                StopTimeoutMs = o.StopTimeoutMs,
            };
        }

        /// <summary>Serves the tools over MCP's streamable HTTP on threads of
        /// capstan's own; returns at once. Throws <see cref="CapstanException"/>
        /// (<c>TRANSPORT</c>: the address cannot be bound, saying why).</summary>
        public McpServer StartMcpServer(McpServerOptions options = null)
        {
            using (var s = new Strings())
            {
                var o = ServerOptions(options, s);
                IntPtr p;
                CapstanException.Check(Native.capstan_mcp_server_start(Live(), ref o, out p));
                GC.KeepAlive(handle);
                return new McpServer(p);
            }
        }

        /// <summary>Serves the tools over MCP on this process's stdin and
        /// stdout, blocking until stdin ends (the client went away). Nothing
        /// else may write to stdout meanwhile.</summary>
        public void ServeMcpStdio(McpServerOptions options = null)
        {
            using (var s = new Strings())
            {
                var o = ServerOptions(options, s);
                CapstanException.Check(Native.capstan_mcp_server_serve_stdio(Live(), ref o));
                GC.KeepAlive(handle);
            }
        }
    }
}
