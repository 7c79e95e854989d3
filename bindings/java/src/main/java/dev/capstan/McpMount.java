package dev.capstan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * An MCP server's tools mounted into a registry ({@link Registry#mountMcp}): each remote tool is a local
 * tool named {@code prefix + name}, its arguments validated locally against the remote inputSchema.
 * {@link #close()} unmounts (disconnects, stops a child process, unregisters the tools).
 */
public final class McpMount implements AutoCloseable {
    /** {@code Options.maxReconnects} meaning "never reconnect" (C's CAPSTAN_MCP_RECONNECT_NEVER, UINT32_MAX). */
    public static final int NEVER_RECONNECT = -1;

    /**
     * Where the server is and how to reach it: exactly one of {@code url} and {@code command}.
     *
     * @param url a streamable-HTTP endpoint
     * @param command a command line speaking MCP on stdio ({@code command.get(0)} looked up in PATH)
     * @param headers "Name: value" strings sent with every HTTP request
     * @param prefix put before every remote tool's name
     * @param connectTimeoutMs 0 = 10 s
     * @param callTimeoutMs each mounted tool's timeout, 0 = none
     * @param maxReconnects reconnect attempts in a row after the connection died: 0 = the default, 5;
     *     {@link McpMount#NEVER_RECONNECT} = never
     */
    public record Options(String url, List<String> command, List<String> headers, String prefix,
            int connectTimeoutMs, int callTimeoutMs, int maxReconnects) {
        public Options {
            command = command == null ? List.of() : List.copyOf(command);
            headers = headers == null ? List.of() : List.copyOf(headers);
        }

        public static Options url(String url) {
            return new Options(url, null, null, null, 0, 0, 0);
        }

        public static Options command(List<String> argv) {
            return new Options(null, argv, null, null, 0, 0, 0);
        }

        public Options withPrefix(String p) {
            return new Options(url, command, headers, p, connectTimeoutMs, callTimeoutMs, maxReconnects);
        }

        public Options withHeaders(List<String> h) {
            return new Options(url, command, h, prefix, connectTimeoutMs, callTimeoutMs, maxReconnects);
        }

        public Options withConnectTimeoutMs(int ms) {
            return new Options(url, command, headers, prefix, ms, callTimeoutMs, maxReconnects);
        }
    }

    private MemorySegment handle;

    McpMount(MemorySegment reg, Options o) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = Native.initStruct(a, Native.MCP_MOUNT_OPTIONS, Native.mcp_mount_options_init,
                    "capstan_mcp_mount_options");
            if (o.url() != null) {
                s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "url"), Native.utf8(a, o.url()));
            }
            if (!o.command().isEmpty()) {
                s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "argv"), Native.cstrings(a, o.command()));
                s.set(Native.SIZE, Native.off(Native.MCP_MOUNT_OPTIONS, "argc"), o.command().size());
            }
            if (!o.headers().isEmpty()) {
                s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "headers"), Native.cstrings(a, o.headers()));
                s.set(Native.SIZE, Native.off(Native.MCP_MOUNT_OPTIONS, "header_count"), o.headers().size());
            }
            if (o.prefix() != null) {
                s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "prefix"), Native.utf8(a, o.prefix()));
            }
            s.set(Native.U32, Native.off(Native.MCP_MOUNT_OPTIONS, "connect_timeout_ms"), o.connectTimeoutMs());
            s.set(Native.U32, Native.off(Native.MCP_MOUNT_OPTIONS, "call_timeout_ms"), o.callTimeoutMs());
            s.set(Native.U32, Native.off(Native.MCP_MOUNT_OPTIONS, "max_reconnects"), o.maxReconnects());
            MemorySegment out = a.allocate(Native.PTR);
            Native.check((int) Native.mcp_mount_new.invokeExact(reg, s, out));
            handle = out.get(Native.PTR, 0);
        }
    }

    /** {@code {"connected","tools":{local: remote},"problems":[...],"reconnects","gave_up","last_error"}}. */
    public synchronized String infoJson() {
        if (handle == null) throw new IllegalStateException("mount is closed");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(Native.PTR);
            MemorySegment len = a.allocate(Native.SIZE);
            Native.check((int) Native.mcp_mount_info_json.invokeExact(handle, out, len));
            return Native.takeString(out, len);
        } catch (CapstanException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public synchronized void close() {
        if (handle == null) return;
        try {
            int st = (int) Native.mcp_mount_free.invokeExact(handle);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            handle = null;
        }
    }
}
