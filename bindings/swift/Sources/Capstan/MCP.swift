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

/// OAuth 2.1 for a mount over HTTP whose server asks for authorization
/// (`McpMountOptions.oauth`; the `oauth_` fields of
/// `capstan_mcp_mount_options`). capstan runs the flow (discovery, client
/// registration, PKCE, the code exchange, refresh, a step-up on
/// `insufficient_scope`); the host does what only it can. The closures run
/// on capstan's MCP threads (possibly on several at once) and are released
/// exactly once, after their last call, once the mount lets go of them
/// (closed, or failed to mount).
public struct McpOAuth: Sendable {
    /// Shows the authorization URL to the user (opens a browser), waits for
    /// the authorization server to send them to `redirectURI` and returns
    /// that whole URL, with its code and state (at most
    /// `CAPSTAN_MCP_REDIRECT_MAX` bytes). nil or "" refuses (the mount then
    /// fails with MCP_CONNECT saying so); so does a thrown error, which the
    /// mount's `CapstanError` names. May block, up to the connect timeout.
    public var authorize: (@Sendable (String) throws -> String?)?
    /// Where the user is sent back, e.g. "http://127.0.0.1:8976/callback"; required with `authorize`.
    public var redirectURI: String?
    /// A client registered beforehand (nil: capstan registers one), and its secret.
    public var clientID: String?
    public var clientSecret: String?
    /// HTTPS URL of the host's client-id metadata document.
    public var clientMetadataURL: String?
    /// Space-separated scopes; nil: the server's choice.
    public var scopes: String?
    /// The JSON text `tokensSave` kept last; nil: none. Without the pair,
    /// tokens live in memory for the mount's life.
    public var tokensLoad: (@Sendable () -> String?)?
    /// Keeps the tokens (JSON text holding secrets: the keychain); nil: forget them.
    public var tokensSave: (@Sendable (String?) -> Void)?

    // Without `authorize` (no user to ask) the mount still gets tokens: with
    // `clientID` and `clientSecret` or `clientKey` (the client-credentials
    // grant), or with `assertion` (the JWT-bearer grant). DPoP (RFC 9449) is
    // automatic when the authorization server offers ES256.

    /// PEM text of `clientID`'s private key (PKCS#8, an EC P-256 key:
    /// ES256): the client authenticates at the token endpoint with a signed
    /// assertion (private_key_jwt) instead of `clientSecret`. Text that is
    /// not such a key, or a key without `clientID`, is INVALID_ARGUMENT
    /// naming `opts.oauth_client_key`.
    public var clientKey: String?
    /// Returns a JWT the host got elsewhere for the audience it is given.
    /// Without `identityProvider` it is the workload's identity token
    /// (SEP-1933), sent in the JWT-bearer grant (RFC 7523) to the server's
    /// authorization server, whose issuer is the audience; with it, the
    /// user's ID token (the audience is `identityProvider.issuer`),
    /// exchanged there for an ID-JAG sent in the JWT-bearer grant as
    /// `clientID`. nil or "" refuses (the mount then fails with MCP_CONNECT
    /// saying so); so does a thrown error, which the mount's `CapstanError`
    /// names, or a JWT longer than `CAPSTAN_MCP_ASSERTION_MAX` bytes. A
    /// grant the server refuses fails the mount with the server's error,
    /// and is not tried again. Called for each authorization; used when
    /// `authorize` is nil.
    public var assertion: (@Sendable (_ audience: String) throws -> String?)?
    /// Enterprise-managed authorization (SEP-990): needs `assertion`.
    public var identityProvider: McpIdentityProvider?

    public init(
        authorize: (@Sendable (String) throws -> String?)? = nil, redirectURI: String? = nil, clientID: String? = nil,
        clientSecret: String? = nil, clientMetadataURL: String? = nil, scopes: String? = nil,
        tokensLoad: (@Sendable () -> String?)? = nil, tokensSave: (@Sendable (String?) -> Void)? = nil,
        clientKey: String? = nil, assertion: (@Sendable (_ audience: String) throws -> String?)? = nil,
        identityProvider: McpIdentityProvider? = nil
    ) {
        self.authorize = authorize
        self.redirectURI = redirectURI
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clientMetadataURL = clientMetadataURL
        self.scopes = scopes
        self.tokensLoad = tokensLoad
        self.tokensSave = tokensSave
        self.clientKey = clientKey
        self.assertion = assertion
        self.identityProvider = identityProvider
    }
}

/// An enterprise identity provider (`McpOAuth.identityProvider`; the
/// `oauth_idp_` fields of `capstan_mcp_mount_options`), where the user's ID
/// token from `McpOAuth.assertion` is exchanged for an ID-JAG
/// (enterprise-managed authorization, SEP-990).
public struct McpIdentityProvider: Sendable {
    /// Its issuer identifier (the ID-JAG's `iss`).
    public var issuer: String
    /// Where the ID token is exchanged.
    public var tokenEndpoint: String
    /// The host's client there, and its secret (nil: a public client).
    public var clientID: String
    public var clientSecret: String?

    public init(issuer: String, tokenEndpoint: String, clientID: String, clientSecret: String? = nil) {
        self.issuer = issuer
        self.tokenEndpoint = tokenEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
    }
}

/// What an OAuth closure threw, kept for the mount's error (shared with
/// the box, which capstan may release on another thread).
final class OAuthTrouble: @unchecked Sendable {
    private let lock = NSLock()
    private var first: String?
    func note(_ what: String) {
        lock.lock()
        if first == nil { first = what }
        lock.unlock()
    }
    var what: String? {
        lock.lock()
        defer { lock.unlock() }
        return first
    }
}

/// The host's McpOAuth as `oauth_user_data`, released by `oauthRelease`.
final class OAuthBox: @unchecked Sendable {
    let oauth: McpOAuth
    let trouble: OAuthTrouble
    init(_ oauth: McpOAuth, _ trouble: OAuthTrouble) {
        self.oauth = oauth
        self.trouble = trouble
    }
}

private let oauthAuthorize: capstan_mcp_authorize_fn = { userData, url, redirect, cap in
    guard let userData, let redirect else { return 0 }
    let box = Unmanaged<OAuthBox>.fromOpaque(userData).takeUnretainedValue()
    guard let authorize = box.oauth.authorize else { return 0 }
    do {
        guard let to = try authorize(url.map { String(cString: $0) } ?? ""), !to.isEmpty else { return 0 }
        let bytes = Array(to.utf8)
        guard bytes.count <= cap else {
            box.trouble.note("the redirect URL is longer than CAPSTAN_MCP_REDIRECT_MAX")
            return 0
        }
        bytes.withUnsafeBytes { UnsafeMutableRawPointer(redirect).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        return bytes.count
    } catch {
        box.trouble.note("the authorize closure threw: \(error)")
        return 0
    }
}

private let oauthTokensLoad: capstan_mcp_tokens_load_fn = { userData, buf, cap in
    guard let userData, let buf, let load = Unmanaged<OAuthBox>.fromOpaque(userData).takeUnretainedValue().oauth.tokensLoad
    else { return 0 }
    guard let json = load() else { return 0 }
    let bytes = Array(json.utf8)
    guard !bytes.isEmpty, bytes.count <= cap else { return 0 }  // too long: as none kept
    bytes.withUnsafeBytes { UnsafeMutableRawPointer(buf).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    return bytes.count
}

private let oauthTokensSave: capstan_mcp_tokens_save_fn = { userData, json, len in
    guard let userData, let save = Unmanaged<OAuthBox>.fromOpaque(userData).takeUnretainedValue().oauth.tokensSave else {
        return
    }
    save(len > 0 ? text(json, len) : nil)
}

private let oauthAssertion: capstan_mcp_assertion_fn = { userData, audience, out, cap in
    guard let userData, let out else { return 0 }
    let box = Unmanaged<OAuthBox>.fromOpaque(userData).takeUnretainedValue()
    guard let assertion = box.oauth.assertion else { return 0 }
    do {
        guard let jwt = try assertion(audience.map { String(cString: $0) } ?? ""), !jwt.isEmpty else { return 0 }
        let bytes = Array(jwt.utf8)
        guard bytes.count <= cap else {
            box.trouble.note("the assertion closure's JWT is longer than CAPSTAN_MCP_ASSERTION_MAX")
            return 0
        }
        bytes.withUnsafeBytes { UnsafeMutableRawPointer(out).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        return bytes.count
    } catch {
        box.trouble.note("the assertion closure threw: \(error)")
        return 0
    }
}

private let oauthRelease: capstan_destroy_fn = { userData in
    guard let userData else { return }
    Unmanaged<OAuthBox>.fromOpaque(userData).release()
}

/// The requests a mount's host answers (`McpInput.methods`;
/// `CAPSTAN_MCP_INPUT_*`).
public struct McpInputMethods: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `elicitation/create`: a form for the user.
    public static let elicitation = McpInputMethods(rawValue: UInt32(CAPSTAN_MCP_INPUT_ELICITATION))
    /// `sampling/createMessage`: a completion of the host's model.
    public static let sampling = McpInputMethods(rawValue: UInt32(CAPSTAN_MCP_INPUT_SAMPLING))
    /// `roots/list`: the host's roots.
    public static let roots = McpInputMethods(rawValue: UInt32(CAPSTAN_MCP_INPUT_ROOTS))
}

/// The host's answers to what a mounted server asks while running one of
/// its tools (`McpMountOptions.input`; the `input_` fields of
/// `capstan_mcp_mount_options`): a form for the user, a completion of the
/// host's model, the host's roots. A 2026-07-28 server asks with an
/// `InputRequiredResult` (the mount has every request answered, then calls
/// the tool again with the answers, up to 10 rounds a call); an older
/// server (2025-11-25) sends its requests mid-call. The closure runs on
/// capstan's MCP threads (possibly on several at once) and is released
/// exactly once, after its last call, once the mount lets go of it (closed,
/// or failed to mount).
public struct McpInput: Sendable {
    /// What `answer` answers, declared to the server as the client's
    /// capabilities: at least one (none, or methods without `answer`, is
    /// INVALID_ARGUMENT).
    public var methods: McpInputMethods
    /// Given the mounted tool's local name (nil for an older server's
    /// request: made mid-call, it names no call), the method and the
    /// request's params as JSON text, returns the method's result as JSON
    /// text: an `ElicitResult` (`{"action":"accept","content":{...}}`,
    /// `"decline"` or `"cancel"`; the requested schema's defaults are
    /// filled in for fields an accepted form leaves out), a
    /// `CreateMessageResult` or a `ListRootsResult`, at most
    /// `CAPSTAN_MCP_INPUT_ANSWER_MAX` bytes (1 MiB). nil, "", a thrown
    /// error, a longer answer or one that is not the method's result gives
    /// no answer: the call ends as a tool error saying so ("the host gave
    /// no answer to ..."). May block (a user answering): capstan stops
    /// waiting when the call ends (for an older server's request, after an
    /// hour). It must not close the mount.
    public var answer: (@Sendable (_ tool: String?, _ method: String, _ params: String) throws -> String?)?

    public init(
        methods: McpInputMethods,
        answer: (@Sendable (_ tool: String?, _ method: String, _ params: String) throws -> String?)?
    ) {
        self.methods = methods
        self.answer = answer
    }
}

/// The host's McpInput as `input_user_data`, released by `inputRelease`.
final class InputBox: @unchecked Sendable {
    let input: McpInput
    init(_ input: McpInput) { self.input = input }
}

private let inputAnswer: capstan_mcp_input_fn = { userData, tool, method, params, paramsLen, answer, cap in
    guard let userData, let method, let answer else { return 0 }
    guard let reply = Unmanaged<InputBox>.fromOpaque(userData).takeUnretainedValue().input.answer else { return 0 }
    // A thrown error is no answer: the call says so.
    guard let json = try? reply(tool.map { String(cString: $0) }, String(cString: method), text(params, paramsLen)),
        !json.isEmpty
    else { return 0 }
    let bytes = Array(json.utf8)
    guard bytes.count <= cap else { return 0 }  // too long: no answer
    bytes.withUnsafeBytes { UnsafeMutableRawPointer(answer).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    return bytes.count
}

private let inputRelease: capstan_destroy_fn = { userData in
    guard let userData else { return }
    Unmanaged<InputBox>.fromOpaque(userData).release()
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
    /// `url` only: OAuth 2.1 for a server that asks for it.
    public var oauth: McpOAuth?
    /// Answers what the server asks while running a tool; nil: nothing is
    /// answered, nor declared.
    public var input: McpInput?

    public static func command(_ argv: [String], prefix: String? = nil) -> McpMountOptions {
        McpMountOptions(command: argv, url: nil, prefix: prefix)
    }

    public static func url(_ url: String, prefix: String? = nil, headers: [String: String] = [:]) -> McpMountOptions {
        McpMountOptions(command: [], url: url, headers: headers, prefix: prefix)
    }

    public init(
        command: [String] = [], url: String? = nil, env: [String: String] = [:], cwd: String? = nil,
        headers: [String: String] = [:], prefix: String? = nil, connectTimeoutMs: UInt32 = 0, callTimeoutMs: UInt32 = 0,
        maxReconnects: UInt32? = nil, reconnectBackoffMs: UInt32 = 0, protocolVersion: String? = nil,
        oauth: McpOAuth? = nil, input: McpInput? = nil
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
        self.oauth = oauth
        self.input = input
    }

    /// `trouble`: where the OAuth closures note what they threw. With
    /// `oauth` (and `input`), the box is handed to capstan here, which
    /// releases it exactly once (also when the mount fails): call this once
    /// per mount attempt.
    func withC<R>(trouble: OAuthTrouble, _ body: (UnsafePointer<capstan_mcp_mount_options>) throws -> R) rethrows -> R {
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
                                try withOAuthCStrings { redirect, id, secret, metadata, scopes in
                                    try withOAuthGrantCStrings { key, idpIssuer, idpEndpoint, idpID, idpSecret in
                                        o.oauth_redirect_uri = redirect
                                        o.oauth_client_id = id
                                        o.oauth_client_secret = secret
                                        o.oauth_client_metadata_url = metadata
                                        o.oauth_scopes = scopes
                                        o.oauth_client_key = key
                                        o.oauth_idp_issuer = idpIssuer
                                        o.oauth_idp_token_endpoint = idpEndpoint
                                        o.oauth_idp_client_id = idpID
                                        o.oauth_idp_client_secret = idpSecret
                                        if let oauth {
                                            o.oauth_authorize = oauth.authorize == nil ? nil : oauthAuthorize
                                            o.oauth_tokens_load = oauth.tokensLoad == nil ? nil : oauthTokensLoad
                                            o.oauth_tokens_save = oauth.tokensSave == nil ? nil : oauthTokensSave
                                            o.oauth_assertion = oauth.assertion == nil ? nil : oauthAssertion
                                            o.oauth_user_data = Unmanaged.passRetained(OAuthBox(oauth, trouble)).toOpaque()
                                            o.oauth_destroy = oauthRelease
                                        }
                                        if let input {
                                            o.input_answer = input.answer == nil ? nil : inputAnswer
                                            o.input_methods = input.methods.rawValue
                                            o.input_user_data = Unmanaged.passRetained(InputBox(input)).toOpaque()
                                            o.input_destroy = inputRelease
                                        }
                                        return try withOptionalCString(protocolVersion) { v in
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
    }
}

extension McpMountOptions {
    /// The OAuth strings as C strings (NULL when unset), alive during `body`.
    func withOAuthCStrings<R>(
        _ body: (
            UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?
        ) throws -> R
    ) rethrows -> R {
        try withOptionalCString(oauth?.redirectURI) { redirect in
            try withOptionalCString(oauth?.clientID) { id in
                try withOptionalCString(oauth?.clientSecret) { secret in
                    try withOptionalCString(oauth?.clientMetadataURL) { metadata in
                        try withOptionalCString(oauth?.scopes) { scopes in
                            try body(redirect, id, secret, metadata, scopes)
                        }
                    }
                }
            }
        }
    }
}

extension McpMountOptions {
    /// The strings of the grants without a user (the client key and the
    /// identity provider) as C strings (NULL when unset), alive during `body`.
    func withOAuthGrantCStrings<R>(
        _ body: (
            UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?
        ) throws -> R
    ) rethrows -> R {
        let idp = oauth?.identityProvider
        return try withOptionalCString(oauth?.clientKey) { key in
            try withOptionalCString(idp?.issuer) { issuer in
                try withOptionalCString(idp?.tokenEndpoint) { endpoint in
                    try withOptionalCString(idp?.clientID) { id in
                        try withOptionalCString(idp?.clientSecret) { secret in
                            try body(key, issuer, endpoint, id, secret)
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
