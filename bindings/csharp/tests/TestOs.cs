// Child processes and HTTP GETs for the tests, through libc (Linux, where
// the suite runs): System.Diagnostics.Process and the HTTP clients live in
// System.dll, whose dependencies (Mono.Security, System.Xml, System.Security,
// ...) would all have to be AOT-compiled for the `mono --full-aot` run, while
// a P/Invoke into libc is compiled with the test itself.
using System;
using System.Collections;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

internal static class TestOs
{
    [DllImport("libc", SetLastError = true)]
    private static extern int posix_spawnp(out int pid, string file, IntPtr fileActions, IntPtr attr, IntPtr[] argv, IntPtr[] envp);

    [DllImport("libc", SetLastError = true)]
    private static extern int kill(int pid, int signal);

    [DllImport("libc", SetLastError = true)]
    private static extern int waitpid(int pid, out int status, int options);

    [DllImport("libc", SetLastError = true)]
    private static extern int socket(int domain, int type, int protocol);

    [DllImport("libc", SetLastError = true)]
    private static extern int connect(int fd, byte[] addr, int len);

    [DllImport("libc", SetLastError = true)]
    private static extern IntPtr send(int fd, byte[] buf, UIntPtr len, int flags);

    [DllImport("libc", SetLastError = true)]
    private static extern IntPtr recv(int fd, byte[] buf, UIntPtr len, int flags);

    [DllImport("libc", SetLastError = true)]
    private static extern int close(int fd);

    private static IntPtr[] Strings(IList<string> items, List<IntPtr> held)
    {
        var a = new IntPtr[items.Count + 1];
        for (int i = 0; i < items.Count; i++)
        {
            var b = Encoding.UTF8.GetBytes(items[i] + "\0");
            a[i] = Marshal.AllocHGlobal(b.Length);
            Marshal.Copy(b, 0, a[i], b.Length);
            held.Add(a[i]);
        }
        return a;
    }

    /// <summary>Starts <c>sh -c command</c> with this process's environment; its pid.</summary>
    internal static int Spawn(string command)
    {
        var env = new List<string>();
        foreach (DictionaryEntry e in Environment.GetEnvironmentVariables()) env.Add(e.Key + "=" + e.Value);
        var held = new List<IntPtr>();
        try
        {
            int pid;
            int rc = posix_spawnp(out pid, "sh", IntPtr.Zero, IntPtr.Zero, Strings(new[] { "sh", "-c", command }, held), Strings(env, held));
            if (rc != 0) throw new Exception("posix_spawnp failed: " + rc);
            return pid;
        }
        finally
        {
            foreach (var p in held) Marshal.FreeHGlobal(p);
        }
    }

    /// <summary>Kills (SIGKILL) and reaps <paramref name="pid"/>.</summary>
    internal static void Kill(int pid)
    {
        kill(pid, 9);
        int status;
        waitpid(pid, out status, 0);
    }

    /// <summary>The child's exit code, once it ends.</summary>
    internal static int Wait(int pid)
    {
        int status;
        waitpid(pid, out status, 0);
        return (status >> 8) & 0xff;
    }

    /// <summary>A shell word for <paramref name="s"/>.</summary>
    internal static string Quote(string s)
    {
        return "'" + s.Replace("'", "'\\''") + "'";
    }

    /// <summary>Waits (up to a minute) until <paramref name="path"/> holds
    /// text that <paramref name="ready"/> accepts; that text.</summary>
    internal static string AwaitFile(string path, Func<string, bool> ready)
    {
        for (int i = 0; i < 6000; i++)
        {
            try
            {
                if (File.Exists(path))
                {
                    var text = File.ReadAllText(path);
                    if (ready(text)) return text;
                }
            }
            catch (IOException)
            {
            }
            Thread.Sleep(10);
        }
        throw new Exception(path + " never became ready");
    }

    /// <summary>GET <paramref name="url"/> (http://127.0.0.1:PORT/...), no
    /// redirect followed: the status code, the Location header and the body.</summary>
    internal static int Get(string url, out string location, out string body)
    {
        const string prefix = "http://127.0.0.1:";
        if (!url.StartsWith(prefix)) throw new ArgumentException("not a loopback URL: " + url);
        var rest = url.Substring(prefix.Length);
        int slash = rest.IndexOf('/');
        int port = int.Parse(slash < 0 ? rest : rest.Substring(0, slash));
        var path = slash < 0 ? "/" : rest.Substring(slash);
        int fd = socket(2, 1, 0); // AF_INET, SOCK_STREAM
        if (fd < 0) throw new Exception("socket failed");
        try
        {
            var addr = new byte[16];
            addr[0] = 2; // sin_family, little-endian
            addr[2] = (byte)(port >> 8);
            addr[3] = (byte)port;
            addr[4] = 127;
            addr[7] = 1;
            if (connect(fd, addr, addr.Length) != 0) throw new Exception("connect to port " + port + " failed");
            var req = Encoding.ASCII.GetBytes("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n\r\n");
            if ((long)send(fd, req, (UIntPtr)req.Length, 0) != req.Length) throw new Exception("send failed");
            var all = new MemoryStream();
            var buf = new byte[8192];
            while (true)
            {
                long n = (long)recv(fd, buf, (UIntPtr)buf.Length, 0);
                if (n <= 0) break;
                all.Write(buf, 0, (int)n);
            }
            var text = Encoding.UTF8.GetString(all.ToArray());
            int end = text.IndexOf("\r\n\r\n");
            var head = end < 0 ? text : text.Substring(0, end);
            body = end < 0 ? "" : text.Substring(end + 4);
            location = null;
            foreach (var line in head.Split(new[] { "\r\n" }, StringSplitOptions.None))
                if (line.StartsWith("Location:", StringComparison.OrdinalIgnoreCase)) location = line.Substring(9).Trim();
            var status = head.Split(' ');
            return status.Length > 1 ? int.Parse(status[1]) : 0;
        }
        finally
        {
            close(fd);
        }
    }
}
