// P/Invoke declarations of the part of include/capstan.h this binding uses.
// Every callback capstan calls is a static method marked
// [MonoPInvokeCallback] (Callbacks.cs): IL2CPP and Mono's full AOT cannot
// marshal a delegate to a lambda or an instance method.
using System;
using System.Runtime.InteropServices;

namespace Capstan
{
    internal static class Native
    {
#if (UNITY_IOS && !UNITY_EDITOR) || CAPSTAN_STATIC
        // iOS links plugins statically (CAPSTAN_STATIC: the build of the
        // assembly the Unity package ships for iOS, and any host that links
        // libcapstan.a into its executable).
        internal const string Lib = "__Internal";
#else
        // libcapstan.so / libcapstan.dylib / capstan.dll, found by the
        // runtime's own search (LD_LIBRARY_PATH, DYLD_LIBRARY_PATH, PATH,
        // Plugins/<platform>/ in Unity, runtimes/<rid>/native/ in NuGet).
        internal const string Lib = "capstan";
#endif

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void ToolFn(IntPtr userData, IntPtr call);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void DestroyFn(IntPtr userData);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void ResultFn(IntPtr userData, IntPtr result);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void ApproverFn(IntPtr userData, IntPtr approval);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void EventFn(IntPtr userData, IntPtr evt);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void NotifyFn(IntPtr userData);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void TextFn(IntPtr userData, IntPtr text, UIntPtr len);

        // capstan_mcp_authorize_fn and capstan_mcp_assertion_fn: an input
        // (NUL-terminated) in, an answer copied into capstan's room.
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate UIntPtr AskFn(IntPtr userData, IntPtr question, IntPtr answer, UIntPtr cap);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate UIntPtr TokensLoadFn(IntPtr userData, IntPtr buf, UIntPtr cap);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void TokensSaveFn(IntPtr userData, IntPtr json, UIntPtr len);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate UIntPtr InputFn(IntPtr userData, IntPtr tool, IntPtr method, IntPtr parameters, UIntPtr paramsLen, IntPtr answer, UIntPtr cap);

        // capstan_journal_record_fn and capstan_journal_lookup_fn: the
        // strings are not NUL-terminated; 0 is success.
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate int JournalRecordFn(IntPtr userData, IntPtr json, UIntPtr len);

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate int JournalLookupFn(IntPtr userData, IntPtr run, UIntPtr runLen, IntPtr call, UIntPtr callLen, IntPtr answer);

        // capstan_journal_callbacks.
        [StructLayout(LayoutKind.Sequential)]
        internal struct JournalCallbacks
        {
            public uint StructSize;
            public IntPtr Record;
            public IntPtr Lookup;
            public IntPtr UserData;
            public IntPtr Destroy;
        }

        // capstan_result (borrowed during a result callback).
        [StructLayout(LayoutKind.Sequential)]
        internal struct Result
        {
            public UIntPtr Index;
            public IntPtr Id;
            public UIntPtr IdLen;
            public IntPtr Name;
            public UIntPtr NameLen;
            public IntPtr Content;
            public UIntPtr ContentLen;
            public uint Outcome;
            public byte IsError;
            public ulong DurationUs;
            public IntPtr Parts;
            public UIntPtr PartsLen;
            public IntPtr Structured;
            public UIntPtr StructuredLen;
        }

        // capstan_event (borrowed during the hook).
        [StructLayout(LayoutKind.Sequential)]
        internal struct Event
        {
            public uint Kind;
            public IntPtr Tool;
            public UIntPtr ToolLen;
            public IntPtr Id;
            public UIntPtr IdLen;
            public UIntPtr Index;
            public uint Outcome;
            public ulong DurationUs;
            public double Progress;
            public double Total;
            public IntPtr Message;
            public UIntPtr MessageLen;
            public uint Level;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct StreamSink
        {
            public uint StructSize;
            public IntPtr OnText;
            public IntPtr OnResult;
            public IntPtr UserData;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct ExportOptions
        {
            public uint StructSize;
            public uint Flags;
            public uint Deferred;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct SearchOptions
        {
            public uint StructSize;
            public uint Flags;
            public uint Limit;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct SearchToolOptions
        {
            public uint StructSize;
            public uint Flags;
            public uint Limit;
            public IntPtr Name;
            public IntPtr Description;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct McpServerOptions
        {
            public uint StructSize;
            public uint Flags;
            public IntPtr Address;
            public IntPtr BearerToken;
            public IntPtr AllowedOrigins;
            public IntPtr AllowedHosts;
            public IntPtr ToolsMeta;
            public IntPtr Name;
            public uint MaxBodyBytes;
            public uint CallTimeoutMs;
            public uint StopTimeoutMs;
        }

        // capstan_mcp_mount_options, every field of this header.
        [StructLayout(LayoutKind.Sequential)]
        internal struct McpMountOptions
        {
            public uint StructSize;
            public IntPtr Argv;
            public UIntPtr Argc;
            public IntPtr Env;
            public UIntPtr EnvCount;
            public IntPtr Cwd;
            public IntPtr Url;
            public IntPtr Headers;
            public UIntPtr HeaderCount;
            public IntPtr Prefix;
            public uint ConnectTimeoutMs;
            public uint CallTimeoutMs;
            public uint MaxReconnects;
            public uint ReconnectBackoffMs;
            public IntPtr ProtocolVersion;
            public IntPtr OauthAuthorize;
            public IntPtr OauthRedirectUri;
            public IntPtr OauthClientId;
            public IntPtr OauthClientSecret;
            public IntPtr OauthClientMetadataUrl;
            public IntPtr OauthScopes;
            public IntPtr OauthTokensLoad;
            public IntPtr OauthTokensSave;
            public IntPtr OauthUserData;
            public IntPtr OauthDestroy;
            public IntPtr InputAnswer;
            public uint InputMethods;
            public IntPtr InputUserData;
            public IntPtr InputDestroy;
            public IntPtr OauthClientKey;
            public IntPtr OauthAssertion;
            public IntPtr OauthIdpIssuer;
            public IntPtr OauthIdpTokenEndpoint;
            public IntPtr OauthIdpClientId;
            public IntPtr OauthIdpClientSecret;
            public IntPtr OauthClientIssuer;
        }

        // capstan_tool_def, as CAPSTAN_TOOL_DEF_INIT lays it out.
        [StructLayout(LayoutKind.Sequential)]
        internal struct ToolDef
        {
            public uint StructSize;
            public IntPtr Name;
            public IntPtr Description;
            public IntPtr Parameters;
            public IntPtr Callback;
            public IntPtr UserData;
            public IntPtr Destroy;
            public uint TimeoutMs;
            public uint MaxOutputChars;
            public uint Flags;
            public IntPtr McpMeta;
        }

        // capstan_exec_options (its first fields; struct_size says which).
        [StructLayout(LayoutKind.Sequential)]
        internal struct ExecOptions
        {
            public uint StructSize;
            public uint Flags;
            public uint Limit;
            public uint TimeoutMs;
            public IntPtr ApprovedIds;
            public UIntPtr ApprovedCount;
            public uint DeadlineMs;
            public IntPtr RunId;
            public UIntPtr RunIdLen;
        }

        internal const uint ExecDeliverPoll = 1u << 1;

        internal const int Ok = 0;
        internal const uint ToolHostRun = 1u << 5;
        internal const uint ContentText = 0;
        internal const uint ContentJson = 1;
        internal const uint ContentParts = 2;

        [StructLayout(LayoutKind.Sequential)]
        internal struct RuntimeOptions
        {
            public uint StructSize;
            public uint Threads;
            public uint KeepAliveMs;
        }

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_runtime_configure(ref RuntimeOptions opts);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_runtime_shutdown(uint timeoutMs);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_status_name(int status);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern UIntPtr capstan_error_message(byte[] buf, UIntPtr cap);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_string_free(IntPtr ptr);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_version_string();

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_new(IntPtr opts, out IntPtr reg);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_registry_free(IntPtr reg);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_add_tool(IntPtr reg, ref ToolDef def);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_remove_tool(IntPtr reg, byte[] name, UIntPtr nameLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_tools_json(IntPtr reg, uint format, IntPtr opts, out IntPtr json, out UIntPtr len, out IntPtr report, out UIntPtr reportLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_execute(IntPtr reg, byte[] calls, UIntPtr len, ref ExecOptions opts, out IntPtr results, out UIntPtr resultsLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_run_turn(IntPtr reg, uint format, byte[] response, UIntPtr len, ref ExecOptions opts, out IntPtr messages, out UIntPtr messagesLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern UIntPtr capstan_registry_pump(IntPtr reg, uint budgetMs);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_call_arguments(IntPtr call, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_call_id(IntPtr call, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_call_tool(IntPtr call, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        [return: MarshalAs(UnmanagedType.I1)]
        internal static extern bool capstan_call_cancelled(IntPtr call);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_call_return(IntPtr call, uint kind, byte[] content, UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_call_fail(IntPtr call, byte[] message, UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_error_json(out IntPtr json, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_names_json(IntPtr reg, out IntPtr json, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_tools_json(IntPtr reg, uint format, ref ExportOptions opts, out IntPtr json, out UIntPtr len, out IntPtr report, out UIntPtr reportLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_format_parse_calls(uint format, byte[] response, UIntPtr len, out IntPtr calls, out UIntPtr callsLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_format_write_results(uint format, byte[] results, UIntPtr len, out IntPtr messages, out UIntPtr messagesLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_format_check_history(uint format, byte[] history, UIntPtr len, uint flags, out IntPtr report, out UIntPtr reportLen, out IntPtr repaired, out UIntPtr repairedLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_search_json(IntPtr reg, byte[] query, UIntPtr len, ref SearchOptions opts, out IntPtr json, out UIntPtr jsonLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_add_search_tool(IntPtr reg, ref SearchToolOptions opts);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_unload_tools(IntPtr reg);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_needs_approval(IntPtr reg, byte[] calls, UIntPtr len, ref ExecOptions opts, out IntPtr json, out UIntPtr jsonLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_batch_submit(IntPtr reg, byte[] calls, UIntPtr len, ref ExecOptions opts, IntPtr onResult, IntPtr userData, out IntPtr batch);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_batch_wait(IntPtr batch, uint timeoutMs);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern UIntPtr capstan_batch_poll(IntPtr batch, IntPtr onResult, IntPtr userData, UIntPtr max);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_batch_cancel(IntPtr batch);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_batch_free(IntPtr batch);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_set_notify(IntPtr reg, IntPtr notify, IntPtr userData, IntPtr destroy);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_set_approver(IntPtr reg, IntPtr approver, IntPtr userData, IntPtr destroy);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_approval_tool(IntPtr approval, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_approval_id(IntPtr approval, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_approval_arguments(IntPtr approval, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_approval_decide(IntPtr approval, [MarshalAs(UnmanagedType.I1)] bool approve, byte[] reason, UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_set_event_hook(IntPtr reg, IntPtr hook, IntPtr userData, IntPtr destroy);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_stats_json(IntPtr reg, out IntPtr json, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_call_progress(IntPtr call, double progress, double total, byte[] message, UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_call_log(IntPtr call, uint level, byte[] message, UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_stream_new(IntPtr reg, uint format, ref ExecOptions opts, ref StreamSink sink, out IntPtr stream);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_stream_feed(IntPtr stream, byte[] bytes, UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_stream_finish(IntPtr stream, out IntPtr json, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_stream_cancel(IntPtr stream);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_stream_free(IntPtr stream);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_mcp_server_serve_stdio(IntPtr reg, ref McpServerOptions opts);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_mcp_server_start(IntPtr reg, ref McpServerOptions opts, out IntPtr server);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_mcp_server_url(IntPtr server, out IntPtr url, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_mcp_server_stop(IntPtr server);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_mcp_server_free(IntPtr server);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_mcp_mount_new(IntPtr reg, ref McpMountOptions opts, out IntPtr mount);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_mcp_mount_free(IntPtr mount);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_mcp_mount_info_json(IntPtr mount, out IntPtr json, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr capstan_call_input(IntPtr call, out UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_call_require_input(IntPtr call, byte[] requests, UIntPtr len, byte[] state, UIntPtr stateLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_journal_open_jsonl(byte[] path, UIntPtr len, out IntPtr journal);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_journal_open_sqlite(byte[] path, UIntPtr len, uint flags, out IntPtr journal);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_journal_new(ref JournalCallbacks cbs, out IntPtr journal);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_journal_answer_set(IntPtr answer, byte[] json, UIntPtr len);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_journal_free(IntPtr journal);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_registry_set_journal(IntPtr reg, IntPtr journal, uint flags);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_host_batch_begin(IntPtr reg, byte[] calls, UIntPtr len, ref ExecOptions opts, out IntPtr batch, out IntPtr callsJson, out UIntPtr callsLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int capstan_host_batch_finish(IntPtr batch, byte[] answers, UIntPtr len, uint timeoutMs, out IntPtr results, out UIntPtr resultsLen);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_host_batch_cancel(IntPtr batch);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void capstan_host_batch_free(IntPtr batch);
    }
}
