// The negative control of `make csharp-test`'s full-AOT run: a native
// callback made from a lambda, which IL2CPP refuses. Under `mono --full-aot`
// this must fail ("Attempting to JIT compile"); if it ran, the AOT run would
// prove nothing about the binding's callbacks, and csharp-test fails.
using System;
using System.Runtime.InteropServices;

internal static class AotGuard
{
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    private delegate void Fn(IntPtr userData, IntPtr call);

    private static int Main()
    {
        int captured = 0;
        Fn lambda = (u, c) => { captured++; };
        IntPtr p = Marshal.GetFunctionPointerForDelegate(lambda);
        Console.WriteLine("aot-guard: made a native callback from a lambda: " + (p != IntPtr.Zero) + captured);
        return 0;
    }
}
