import CCapstan
import Foundation

/// Options of `ToolRegistry.serveMCP` / `serveMCPStdio` (`capstan_mcp_server_options`).
public struct McpServerOptions: Sendable {
    /// HTTP: `IP:PORT`; nil = `127.0.0.1:0` (loopback, a port the OS picks).
    public var address: String?
    /// HTTP: every request must carry `Authorization: Bearer <token>`.
    public var bearerToken: String?
    /// HTTP: browser origins accepted besides loopback ones.
    public var allowedOrigins: [String]
    /// HTTP: `Host` values accepted besides localhost, 127.0.0.1 and ::1.
    public var allowedHosts: [String]
    /// `serverInfo.name`; nil = "capstan".
    public var name: String?
    /// HTTP: larger bodies get 413; 0 = 4 MiB.
    public var maxBodyBytes: UInt32
    /// Bounds every call from its arrival; 0 = the tools' own timeouts.
    public var callTimeoutMs: UInt32
    /// How long stopping waits for calls in flight; 0 = 5000.
    public var stopTimeoutMs: UInt32

    public init(
        address: String? = nil, bearerToken: String? = nil, allowedOrigins: [String] = [], allowedHosts: [String] = [],
        name: String? = nil, maxBodyBytes: UInt32 = 0, callTimeoutMs: UInt32 = 0, stopTimeoutMs: UInt32 = 0
    ) {
        self.address = address
        self.bearerToken = bearerToken
        self.allowedOrigins = allowedOrigins
        self.allowedHosts = allowedHosts
        self.name = name
        self.maxBodyBytes = maxBodyBytes
        self.callTimeoutMs = callTimeoutMs
        self.stopTimeoutMs = stopTimeoutMs
    }

    func withC<R>(_ body: (UnsafePointer<capstan_mcp_server_options>) throws -> R) rethrows -> R {
        var o = capstan_mcp_server_options()
        o.struct_size = UInt32(MemoryLayout<capstan_mcp_server_options>.stride)  // zeroed: the defaults
        o.max_body_bytes = maxBodyBytes
        o.call_timeout_ms = callTimeoutMs
        o.stop_timeout_ms = stopTimeoutMs
        let origins = allowedOrigins.isEmpty ? nil : allowedOrigins.joined(separator: ",")
        let hosts = allowedHosts.isEmpty ? nil : allowedHosts.joined(separator: ",")
        return try withOptionalCString(address) { a in
            try withOptionalCString(bearerToken) { t in
                try withOptionalCString(origins) { og in
                    try withOptionalCString(hosts) { h in
                        try withOptionalCString(name) { n in
                            o.address = a
                            o.bearer_token = t
                            o.allowed_origins = og
                            o.allowed_hosts = h
                            o.name = n
                            return try withUnsafePointer(to: &o) { try body($0) }
                        }
                    }
                }
            }
        }
    }
}

/// The registry's tools served over MCP (streamable HTTP): `url`, then `stop()`.
public final class McpServer: @unchecked Sendable {
    private let handle: Handle
    /// The endpoint, e.g. `http://127.0.0.1:41234/mcp`.
    public let url: String

    init(_ handle: Handle) throws {
        self.handle = handle
        do {
            url = try textOut { capstan_mcp_server_url(handle.raw, $0, $1) }
        } catch {
            capstan_mcp_server_free(handle.raw)
            throw error
        }
    }

    deinit {
        // capstan_mcp_server_free stops the server first if it still runs,
        // waiting up to stopTimeoutMs: never on the thread that dropped the
        // last reference (it may be the main actor).
        let handle = self.handle
        Thread { capstan_mcp_server_free(handle.raw) }.start()
    }

    /// Stops the server: calls in flight are cancelled and waited for up to
    /// `stopTimeoutMs`, on a thread of its own. True when none was left running.
    @discardableResult
    public func stop() async -> Bool {
        let handle = self.handle
        let status = (try? await onOwnThread { capstan_mcp_server_stop(handle.raw) }) ?? -1
        return status == 0
    }
}

/// Options of `ToolRegistry.mountMCP` (`capstan_mcp_mount_options`): exactly
/// one of `command` (program and arguments, run on stdio) or `url`.
public struct McpMountOptions: Sendable {
    public var command: [String]
    public var url: String?
    /// `NAME=VALUE` entries added to the command's environment.
    public var env: [String: String]
    public var cwd: String?
    /// HTTP headers, e.g. `["Authorization": "Bearer ..."]`.
    public var headers: [String: String]
    /// Local names are `prefix + remote name`.
    public var prefix: String?
    public var connectTimeoutMs: UInt32
    public var callTimeoutMs: UInt32
    /// nil: the default (5); 0: never reconnect.
    public var maxReconnects: UInt32?
    public var reconnectBackoffMs: UInt32
    public var protocolVersion: String?

    public static func command(_ argv: [String], prefix: String? = nil) -> McpMountOptions {
        McpMountOptions(command: argv, url: nil, prefix: prefix)
    }

    public static func url(_ url: String, prefix: String? = nil, headers: [String: String] = [:]) -> McpMountOptions {
        McpMountOptions(command: [], url: url, headers: headers, prefix: prefix)
    }

    public init(
        command: [String] = [], url: String? = nil, env: [String: String] = [:], cwd: String? = nil,
        headers: [String: String] = [:], prefix: String? = nil, connectTimeoutMs: UInt32 = 0, callTimeoutMs: UInt32 = 0,
        maxReconnects: UInt32? = nil, reconnectBackoffMs: UInt32 = 0, protocolVersion: String? = nil
    ) {
        self.command = command
        self.url = url
        self.env = env
        self.cwd = cwd
        self.headers = headers
        self.prefix = prefix
        self.connectTimeoutMs = connectTimeoutMs
        self.callTimeoutMs = callTimeoutMs
        self.maxReconnects = maxReconnects
        self.reconnectBackoffMs = reconnectBackoffMs
        self.protocolVersion = protocolVersion
    }

    func withC<R>(_ body: (UnsafePointer<capstan_mcp_mount_options>) throws -> R) rethrows -> R {
        var o = capstan_mcp_mount_options()
        o.struct_size = UInt32(MemoryLayout<capstan_mcp_mount_options>.stride)  // zeroed: the defaults
        o.connect_timeout_ms = connectTimeoutMs
        o.call_timeout_ms = callTimeoutMs
        // The C field: 0 is its default (5), UINT32_MAX (CAPSTAN_MCP_RECONNECT_NEVER) never.
        o.max_reconnects = maxReconnects.map { $0 == 0 ? UInt32.max : min($0, UInt32.max - 1) } ?? 0
        o.reconnect_backoff_ms = reconnectBackoffMs
        let envEntries = env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let headerEntries = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return try withCStrings(command) { argv, argc in
            try withCStrings(envEntries) { envp, envc in
                try withCStrings(headerEntries) { hp, hc in
                    try withOptionalCString(cwd) { c in
                        try withOptionalCString(url) { u in
                            try withOptionalCString(prefix) { p in
                                try withOptionalCString(protocolVersion) { v in
                                    o.argv = argv
                                    o.argc = argc
                                    o.env = envp
                                    o.env_count = envc
                                    o.headers = hp
                                    o.header_count = hc
                                    o.cwd = c
                                    o.url = u
                                    o.prefix = p
                                    o.protocol_version = v
                                    return try withUnsafePointer(to: &o) { try body($0) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// An MCP server's tools mounted in a registry: `infoJSON()`, then `close()`.
public final class McpMount: @unchecked Sendable {
    private let lock = NSLock()
    private var handle: Handle?

    init(_ handle: Handle) { self.handle = handle }

    deinit {
        // capstan_mcp_mount_free blocks up to about 2.5 s: never on the
        // thread that dropped the last reference (it may be the main actor).
        if let handle { Thread { _ = capstan_mcp_mount_free(handle.raw) }.start() }
    }

    /// `{"connected","tools":{local: remote},"problems","reconnects","gave_up","last_error"}`.
    public func infoJSON() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        guard let handle else {
            throw CapstanError(status: Int32(CAPSTAN_ERR_STALE_HANDLE), message: "the mount is closed")
        }
        return try textOut { capstan_mcp_mount_info_json(handle.raw, $0, $1) }
    }

    /// Unmounts (its tools are unregistered, a command it started is
    /// stopped), on a thread of its own.
    public func close() async throws {
        lock.lock()
        let taken = handle
        handle = nil
        lock.unlock()
        guard let taken else { return }
        try await onOwnThread { try check(capstan_mcp_mount_free(taken.raw)) }
    }
}

/// capstan's own threads, process-wide.
public enum CapstanRuntime {
    /// Caps capstan's pool threads (`threads`, 0: 256) and how long an idle
    /// one waits before it ends (`keepAliveMs`, 0: 10 s).
    public static func configure(threads: UInt32 = 0, keepAliveMs: UInt32 = 0) throws {
        var o = capstan_runtime_options()
        o.struct_size = UInt32(MemoryLayout<capstan_runtime_options>.stride)  // zeroed: the defaults
        o.threads = threads
        o.keep_alive_ms = keepAliveMs
        try check(capstan_runtime_configure(&o))
    }

    /// Stops and joins every thread capstan started, waiting up to
    /// `timeoutMs` (`.max`: no limit) on a thread of its own; cancels
    /// nothing. True when no capstan thread is left (the library may then be
    /// unloaded), false on timeout. capstan starts its threads again when
    /// next needed. Never call it from inside a tool or a hook.
    public static func shutdown(timeoutMs: UInt32 = .max) async throws -> Bool {
        try await onOwnThread { () throws -> Bool in
            let status = capstan_runtime_shutdown(timeoutMs)
            if status == Int32(CAPSTAN_ERR_TIMEOUT) { return false }
            try check(status)
            return true
        }
    }
}
