// Run by check_packages.py against the Capstan.dll and the native library
// taken out of each built package: the package works as laid out.
using System;
using Capstan;

public static class SmokeTools
{
    [Tool("Adds two integers.")]
    public static long Add(long a, long b) { return a + b; }
}

internal static class PackageSmoke
{
    private static int Main()
    {
        using (var reg = new Registry())
        {
            reg.AddTools(typeof(SmokeTools));
            var r = reg.Execute("{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}");
            Console.WriteLine("package smoke: " + r[0].Content + " from capstan " + Registry.LibraryVersion);
            return r[0].Content == "5" ? 0 : 1;
        }
    }
}
