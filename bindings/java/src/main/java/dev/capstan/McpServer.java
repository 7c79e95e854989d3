package dev.capstan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A registry's tools served over MCP streamable HTTP ({@link Registry#serveMcp}), on threads of capstan's
 * own until {@link #close()} (which stops it: calls in flight are cancelled and waited for, then freed).
 */
public final class McpServer implements AutoCloseable {
    /**
     * Server options; null strings and zeros mean capstan's defaults.
     *
     * @param address {@code IP:PORT} to bind; null: {@code 127.0.0.1:0} (read the port back with {@link #url()})
     * @param bearerToken required as {@code Authorization: Bearer ...} when set (set it on non-loopback addresses)
     * @param allowedHosts comma-separated extra Host values
     * @param name {@code serverInfo.name}
     * @param callTimeoutMs bounds every call from its arrival, 0 = the tools' own timeouts
     */
    public record Options(String address, String bearerToken, String allowedHosts, String name, int callTimeoutMs) {
        public static final Options DEFAULTS = new Options(null, null, null, null, 0);

        public Options withBearerToken(String t) {
            return new Options(address, t, allowedHosts, name, callTimeoutMs);
        }

        public Options withAddress(String a) {
            return new Options(a, bearerToken, allowedHosts, name, callTimeoutMs);
        }
    }

    private MemorySegment handle;
    private final String url;

    McpServer(MemorySegment reg, Options o) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = toNative(a, o);
            MemorySegment out = a.allocate(Native.PTR);
            Native.check((int) Native.mcp_server_start.invokeExact(reg, s, out));
            handle = out.get(Native.PTR, 0);
            MemorySegment u = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            int st = (int) Native.mcp_server_url.invokeExact(handle, u, len);
            if (st != Native.OK) {
                CapstanException e = Native.lastError(st);
                Native.mcp_server_free.invokeExact(handle);
                throw e;
            }
            url = Native.takeString(u, len);
        }
    }

    static MemorySegment toNative(Arena a, Options o) throws Throwable {
        MemorySegment s = Native.initStruct(a, Native.MCP_SERVER_OPTIONS);
        set(a, s, "address", o.address());
        set(a, s, "bearer_token", o.bearerToken());
        set(a, s, "allowed_hosts", o.allowedHosts());
        set(a, s, "name", o.name());
        s.set(Native.U32, Native.off(Native.MCP_SERVER_OPTIONS, "call_timeout_ms"), o.callTimeoutMs());
        return s;
    }

    private static void set(Arena a, MemorySegment s, String field, String v) {
        if (v != null) s.set(Native.PTR, Native.off(Native.MCP_SERVER_OPTIONS, field), Native.utf8(a, v));
    }

    /** The endpoint, e.g. {@code http://127.0.0.1:41234/mcp}. */
    public String url() {
        return url;
    }

    @Override
    public synchronized void close() {
        if (handle == null) return;
        try {
            Native.mcp_server_free.invokeExact(handle);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            handle = null;
        }
    }
}
