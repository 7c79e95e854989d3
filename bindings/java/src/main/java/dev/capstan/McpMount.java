package dev.capstan;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

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
     * @param protocolVersion the MCP version to ask for (null: 2026-07-28, falling back to 2025-11-25)
     * @param oauth OAuth 2.1 for a {@code url} whose server asks for it, or null
     * @param input the host's answers to what the server asks while running a tool, or null: none
     */
    public record Options(String url, List<String> command, List<String> headers, String prefix,
            int connectTimeoutMs, int callTimeoutMs, int maxReconnects, String protocolVersion, OAuth oauth,
            Input input) {
        public Options {
            command = command == null ? List.of() : List.copyOf(command);
            headers = headers == null ? List.of() : List.copyOf(headers);
        }

        /** Options without input answers (the constructor before {@code input}). */
        public Options(String url, List<String> command, List<String> headers, String prefix,
                int connectTimeoutMs, int callTimeoutMs, int maxReconnects, String protocolVersion, OAuth oauth) {
            this(url, command, headers, prefix, connectTimeoutMs, callTimeoutMs, maxReconnects, protocolVersion,
                    oauth, null);
        }

        /** Options without a protocol version or OAuth (the 0.4.0 constructor). */
        public Options(String url, List<String> command, List<String> headers, String prefix,
                int connectTimeoutMs, int callTimeoutMs, int maxReconnects) {
            this(url, command, headers, prefix, connectTimeoutMs, callTimeoutMs, maxReconnects, null, null);
        }

        public static Options url(String url) {
            return new Options(url, null, null, null, 0, 0, 0);
        }

        public static Options command(List<String> argv) {
            return new Options(null, argv, null, null, 0, 0, 0);
        }

        public Options withPrefix(String p) {
            return new Options(url, command, headers, p, connectTimeoutMs, callTimeoutMs, maxReconnects,
                    protocolVersion, oauth, input);
        }

        public Options withHeaders(List<String> h) {
            return new Options(url, command, h, prefix, connectTimeoutMs, callTimeoutMs, maxReconnects,
                    protocolVersion, oauth, input);
        }

        public Options withConnectTimeoutMs(int ms) {
            return new Options(url, command, headers, prefix, ms, callTimeoutMs, maxReconnects, protocolVersion,
                    oauth, input);
        }

        /** "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05" (no fallback then). */
        public Options withProtocolVersion(String v) {
            return new Options(url, command, headers, prefix, connectTimeoutMs, callTimeoutMs, maxReconnects, v,
                    oauth, input);
        }

        public Options withOAuth(OAuth o) {
            return new Options(url, command, headers, prefix, connectTimeoutMs, callTimeoutMs, maxReconnects,
                    protocolVersion, o, input);
        }

        /**
         * The host's answers to what the server asks while running a tool, for {@code methods} (none given:
         * {@link InputMethod#ELICITATION}), declared to the server. See {@link InputAnswerer}.
         */
        public Options withInput(InputAnswerer answerer, InputMethod... methods) {
            return withInput(new Input(answerer, methods.length == 0 ? Set.of(InputMethod.ELICITATION)
                    : new HashSet<>(Arrays.asList(methods))));
        }

        public Options withInput(Input i) {
            return new Options(url, command, headers, prefix, connectTimeoutMs, callTimeoutMs, maxReconnects,
                    protocolVersion, oauth, i);
        }
    }

    /** What a mounted server may ask its client while running a tool (C's CAPSTAN_MCP_INPUT_*). */
    public enum InputMethod {
        ELICITATION("elicitation/create", 1),
        SAMPLING("sampling/createMessage", 2),
        ROOTS("roots/list", 4);

        private final String method;
        final int flag;

        InputMethod(String method, int flag) {
            this.method = method;
            this.flag = flag;
        }

        /** The MCP method's name, e.g. "elicitation/create". */
        public String method() {
            return method;
        }

        /** The method named {@code name} ("elicitation/create", "sampling/createMessage", "roots/list"). */
        public static InputMethod of(String name) {
            for (InputMethod m : values()) {
                if (m.method.equals(name)) return m;
            }
            throw new IllegalArgumentException("unknown input method \"" + name
                    + "\"; known: elicitation/create, sampling/createMessage, roots/list");
        }
    }

    /**
     * Answers a request a mounted server made while running a tool: {@code method} ("elicitation/create",
     * "sampling/createMessage" or "roots/list") with {@code params}, for a call of the mounted tool {@code tool}
     * (its local name; null for an older, 2025-11-25, server's request made mid-call, which names no call).
     * Returns the method's result as anything Jackson writes (a {@code Map}, a {@code JsonNode}, a record), e.g.
     * {@code Map.of("action", "accept", "content", Map.of("name", "Ada"))}, or a {@code CompletionStage} of it;
     * null (or a JSON null), an exception or a failed stage gives no answer: the call fails as a tool error
     * saying the host gave no answer. Runs on one of capstan's MCP threads (possibly several at once) and may
     * block, as a user answering does: capstan stops waiting when the call ends.
     */
    @FunctionalInterface
    public interface InputAnswerer {
        Object answer(String tool, String method, JsonNode params) throws Exception;
    }

    /**
     * An answerer and the methods it answers (declared to the server as the client's capabilities).
     *
     * @param answerer the host's answers (required)
     * @param methods at least one method
     */
    public record Input(InputAnswerer answerer, Set<InputMethod> methods) {
        public Input {
            if (answerer == null) throw new IllegalArgumentException("McpMount.Input: methods need an answerer");
            if (methods == null || methods.isEmpty()) {
                throw new IllegalArgumentException("McpMount.Input: name at least one method (elicitation/create, "
                        + "sampling/createMessage, roots/list)");
            }
            methods = Set.copyOf(EnumSet.copyOf(methods));
        }

        int flags() {
            int f = 0;
            for (InputMethod m : methods) f |= m.flag;
            return f;
        }
    }

    /**
     * The host's part of an OAuth authorization: show {@code authorizationUrl} to the user (open a browser,
     * print it), wait for the authorization server to send them to the redirect URI, and return that whole URL
     * (with its {@code code} and {@code state}). Null or an exception refuses: while mounting, the mount fails
     * with MCP_CONNECT saying so. Runs on one of capstan's MCP threads and may block, up to the mount's connect
     * timeout (capstan stops waiting then).
     */
    @FunctionalInterface
    public interface Authorizer {
        String authorize(String authorizationUrl) throws Exception;
    }

    /**
     * Where an OAuth mount keeps its tokens between mounts (JSON text with the access and refresh tokens and
     * the client id: a secret, keep it as one). Called on capstan's MCP threads.
     */
    public interface TokenStore {
        /** What {@link #save} kept last, or null: nothing stored. */
        String load() throws Exception;

        /** Keeps {@code json}; null: forget what was kept. */
        void save(String json) throws Exception;
    }

    /**
     * The host's part of a grant without a user: a JWT it got elsewhere for {@code audience}. Without an
     * identity provider, the workload's identity token from its platform (workload identity federation), sent in
     * the JWT-bearer grant (RFC 7523) to the server's authorization server, whose issuer is {@code audience};
     * with {@link OAuth#withIdentityProvider}, the user's ID token from that enterprise identity provider
     * ({@code audience} is its issuer), which capstan exchanges there for an ID-JAG first. Null or an exception
     * refuses: while mounting, the mount fails with MCP_CONNECT saying so. Runs on one of capstan's MCP threads.
     */
    @FunctionalInterface
    public interface Assertion {
        String assertion(String audience) throws Exception;
    }

    /**
     * An enterprise identity provider (enterprise-managed authorization, SEP-990).
     *
     * @param issuer its issuer identifier (the ID-JAG's {@code iss})
     * @param tokenEndpoint its token endpoint, where capstan exchanges the user's ID token
     * @param clientId the host's client id there
     * @param clientSecret that client's secret, or null for a public client
     */
    public record IdentityProvider(String issuer, String tokenEndpoint, String clientId, String clientSecret) {
    }

    /**
     * OAuth 2.1 for an HTTP mount whose server asks for it (the MCP authorization spec; the repository README's
     * "Servers that ask for OAuth"): capstan discovers the authorization server, registers a client if none is
     * given, runs PKCE, exchanges the code, refreshes the tokens, and asks the host for what only it can do.
     * Without an authorizer, tokens come from a grant without a user: the client-credentials grant for
     * {@code clientId} with its secret or {@code clientKey}, or the JWT-bearer grant with {@code assertion}'s
     * JWT. DPoP needs nothing from the host: capstan binds its tokens when the authorization server offers it.
     *
     * @param authorizer the user's part (required to authorize; null: only tokens from {@code tokens})
     * @param redirectUri where the authorization server sends the user back (required with an authorizer)
     * @param clientId a client registered beforehand, or null
     * @param clientSecret the secret of {@code clientId} for a confidential client, or null
     * @param clientMetadataUrl HTTPS URL of the host's client-id metadata document, or null
     * @param scopes space-separated scopes to ask for; null: the server's choice
     * @param tokens where the tokens are kept; null: in memory for the mount's life
     * @param clientKey PEM text of {@code clientId}'s private key (PKCS#8, EC P-256): the client authenticates
     *     with a signed assertion (private_key_jwt, ES256) instead of a secret; or null. A key that is not such
     *     PEM text, or one without a client id, fails the mount with INVALID_ARGUMENT naming it
     * @param assertion a JWT for a grant without a user (see {@link Assertion}), or null
     * @param identityProvider the enterprise identity provider {@code assertion}'s ID token is from, or null;
     *     needs {@code assertion} (else INVALID_ARGUMENT)
     * @param clientIssuer the issuer identifier of the authorization server {@code clientSecret} or
     *     {@code clientKey} belong to: they are sent there only; null: only to an authorization server of the
     *     MCP server's own origin (another one fails the mount, and nothing is sent)
     */
    public record OAuth(Authorizer authorizer, String redirectUri, String clientId, String clientSecret,
            String clientMetadataUrl, String scopes, TokenStore tokens, String clientKey, Assertion assertion,
            IdentityProvider identityProvider, String clientIssuer) {
        /** OAuth without a client key, assertion or identity provider (the constructor before them). */
        public OAuth(Authorizer authorizer, String redirectUri, String clientId, String clientSecret,
                String clientMetadataUrl, String scopes, TokenStore tokens) {
            this(authorizer, redirectUri, clientId, clientSecret, clientMetadataUrl, scopes, tokens, null, null,
                    null, null);
        }

        /** OAuth without a pinned issuer (the constructor before it). */
        public OAuth(Authorizer authorizer, String redirectUri, String clientId, String clientSecret,
                String clientMetadataUrl, String scopes, TokenStore tokens, String clientKey, Assertion assertion,
                IdentityProvider identityProvider) {
            this(authorizer, redirectUri, clientId, clientSecret, clientMetadataUrl, scopes, tokens, clientKey,
                    assertion, identityProvider, null);
        }

        /** An authorizer and its redirect URI, nothing else. */
        public static OAuth of(Authorizer authorizer, String redirectUri) {
            return new OAuth(authorizer, redirectUri, null, null, null, null, null);
        }

        /** No user: the client-credentials grant for {@code clientId}, authenticated with its private key. */
        public static OAuth ofClientKey(String clientId, String pem) {
            return of(null, null).withClientKey(clientId, pem);
        }

        /** No user: the JWT-bearer grant with the host's assertion (a workload identity token). */
        public static OAuth ofAssertion(Assertion assertion) {
            return of(null, null).withAssertion(assertion);
        }

        public OAuth withTokens(TokenStore t) {
            return new OAuth(authorizer, redirectUri, clientId, clientSecret, clientMetadataUrl, scopes, t, clientKey,
                    assertion, identityProvider, clientIssuer);
        }

        public OAuth withClient(String id, String secret) {
            return new OAuth(authorizer, redirectUri, id, secret, clientMetadataUrl, scopes, tokens, clientKey,
                    assertion, identityProvider, clientIssuer);
        }

        /** The client {@code id} authenticating with its private key ({@code pem}) instead of a secret. */
        public OAuth withClientKey(String id, String pem) {
            return new OAuth(authorizer, redirectUri, id, clientSecret, clientMetadataUrl, scopes, tokens, pem,
                    assertion, identityProvider, clientIssuer);
        }

        public OAuth withAssertion(Assertion a) {
            return new OAuth(authorizer, redirectUri, clientId, clientSecret, clientMetadataUrl, scopes, tokens,
                    clientKey, a, identityProvider, clientIssuer);
        }

        public OAuth withIdentityProvider(IdentityProvider idp) {
            return new OAuth(authorizer, redirectUri, clientId, clientSecret, clientMetadataUrl, scopes, tokens,
                    clientKey, assertion, idp, clientIssuer);
        }

        public OAuth withClientMetadataUrl(String u) {
            return new OAuth(authorizer, redirectUri, clientId, clientSecret, u, scopes, tokens, clientKey, assertion,
                    identityProvider, clientIssuer);
        }

        /** Pins the issuer the client's secret or key belong to. */
        public OAuth withClientIssuer(String issuer) {
            return new OAuth(authorizer, redirectUri, clientId, clientSecret, clientMetadataUrl, scopes, tokens,
                    clientKey, assertion, identityProvider, issuer);
        }

        public OAuth withScopes(String s) {
            return new OAuth(authorizer, redirectUri, clientId, clientSecret, clientMetadataUrl, s, tokens, clientKey,
                    assertion, identityProvider, clientIssuer);
        }
    }

    private MemorySegment handle;

    McpMount(MemorySegment reg, Options o) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = Native.initStruct(a, Native.MCP_MOUNT_OPTIONS);
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
            if (o.protocolVersion() != null) {
                s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "protocol_version"),
                        Native.utf8(a, o.protocolVersion()));
            }
            if (o.oauth() != null) setOAuth(a, s, o.oauth());
            if (o.input() != null) setInput(s, o.input());
            MemorySegment out = a.allocate(Native.PTR);
            Native.check((int) Native.mcp_mount_new.invokeExact(reg, s, out));
            handle = out.get(Native.PTR, 0);
        }
    }

    /** The oauth_ fields; capstan runs oauth_destroy (dropping the handle) exactly once, even on failure. */
    private static void setOAuth(Arena a, MemorySegment s, OAuth o) {
        String[][] texts = {{"oauth_redirect_uri", o.redirectUri()}, {"oauth_client_id", o.clientId()},
                {"oauth_client_secret", o.clientSecret()}, {"oauth_client_metadata_url", o.clientMetadataUrl()},
                {"oauth_scopes", o.scopes()}, {"oauth_client_key", o.clientKey()},
                {"oauth_client_issuer", o.clientIssuer()}};
        for (String[] t : texts) {
            if (t[1] != null) s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, t[0]), Native.utf8(a, t[1]));
        }
        if (o.authorizer() != null) {
            s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "oauth_authorize"), Native.AUTHORIZE_STUB);
        }
        IdentityProvider idp = o.identityProvider();
        if (idp != null) {
            // capstan checks that the three go together (and need an assertion)
            String[][] idpTexts = {{"oauth_idp_issuer", idp.issuer()},
                    {"oauth_idp_token_endpoint", idp.tokenEndpoint()}, {"oauth_idp_client_id", idp.clientId()},
                    {"oauth_idp_client_secret", idp.clientSecret()}};
            for (String[] t : idpTexts) {
                if (t[1] != null) s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, t[0]), Native.utf8(a, t[1]));
            }
        }
        if (o.assertion() != null) {
            s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "oauth_assertion"), Native.ASSERTION_STUB);
        }
        if (o.tokens() != null) {
            s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "oauth_tokens_load"), Native.TOKENS_LOAD_STUB);
            s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "oauth_tokens_save"), Native.TOKENS_SAVE_STUB);
        }
        s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "oauth_user_data"), Native.keep(o));
        s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "oauth_destroy"), Native.DESTROY_STUB);
    }

    /** The input_ fields; capstan runs input_destroy (dropping the handle) exactly once, even on failure. */
    private static void setInput(MemorySegment s, Input i) {
        s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "input_answer"), Native.INPUT_STUB);
        s.set(Native.U32, Native.off(Native.MCP_MOUNT_OPTIONS, "input_methods"), i.flags());
        s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "input_user_data"), Native.keep(i));
        s.set(Native.PTR, Native.off(Native.MCP_MOUNT_OPTIONS, "input_destroy"), Native.DESTROY_STUB);
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
