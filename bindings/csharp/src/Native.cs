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
#if UNITY_IOS && !UNITY_EDITOR
        // iOS links plugins statically.
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
        }

        internal const int Ok = 0;
        internal const uint ContentText = 0;
        internal const uint ContentJson = 1;

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
    }
}
