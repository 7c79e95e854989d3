package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Mounting an MCP server that asks for OAuth 2.1 (tests/mcp/oauth_server.py: the MCP server and its
 * authorization server in one stdlib-only Python process): the host's authorizer follows the authorization URL
 * as a browser would, the tokens go to the host's store, a second mount with them needs no new authorization,
 * and a refused authorization fails the mount saying so. Without a user: a client key (private_key_jwt) and the
 * host's workload assertion (the JWT-bearer grant) get tokens, and the options capstan refuses name the problem.
 */
class OAuthTest {
    static final String REDIRECT = "http://127.0.0.1:9/callback";
    static Process server;
    static String base;
    static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

    /** The test-only key of oauth_server.py's client "keyed-1" (tests/fixtures/README.md). */
    static String clientKey() throws Exception {
        return Files.readString(Path.of(System.getProperty("user.dir"), "..", "..", "tests", "fixtures", "oauth",
                "client_key.pem"));
    }

    @BeforeAll
    static void start() throws Exception {
        // Standard library only: $CAPSTAN_TEST_PYTHON when it exists, else python3.
        String env = System.getenv("CAPSTAN_TEST_PYTHON");
        String python = env != null && Files.isRegularFile(Path.of(env)) ? env : "python3";
        Path script = Path.of(System.getProperty("user.dir"), "..", "..", "tests", "mcp", "oauth_server.py");
        server = new ProcessBuilder(python, script.toString(), "0")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start(); // tracebacks of dropped connections
        String port = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))
                .readLine();
        assertNotNull(port, "oauth_server.py printed no port");
        base = "http://127.0.0.1:" + port.trim();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            get("/quit");
        } catch (Exception ignored) {
            // it is killed below anyway
        }
        server.destroy();
    }

    static HttpResponse<String> get(String pathOrUrl) throws Exception {
        String url = pathOrUrl.startsWith("http") ? pathOrUrl : base + pathOrUrl;
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode stats() throws Exception {
        return Json.read(get("/stats").body());
    }

    static McpMount.Options options(McpMount.OAuth oauth) {
        return McpMount.Options.url(base + "/mcp").withPrefix("o_").withProtocolVersion("2025-11-25")
                .withConnectTimeoutMs(60000).withOAuth(oauth);
    }

    /** oauth_destroy runs once the mount lets go, maybe soon after on a capstan thread: wait for it, bounded. */
    static void awaitHandles(int atMost) throws InterruptedException {
        for (int i = 0; i < 200 && Native.liveHandles() > atMost; i++) Thread.sleep(50);
        assertTrue(Native.liveHandles() <= atMost, "oauth_destroy did not run: " + Native.liveHandles());
    }

    @Test
    void anOAuthServerMountsThroughTheAuthorizerAndSavedTokensLetTheNextMountInWithoutOne() throws Exception {
        List<String> urlsSeen = new CopyOnWriteArrayList<>();
        // The user's browser: follows the authorization URL (the server redirects at once).
        McpMount.Authorizer browser = url -> {
            urlsSeen.add(url);
            return get(url).headers().firstValue("Location").orElse(null);
        };
        AtomicReference<String> stored = new AtomicReference<>();
        McpMount.TokenStore store = new McpMount.TokenStore() {
            @Override
            public String load() {
                return stored.get();
            }

            @Override
            public void save(String json) {
                stored.set(json);
            }
        };
        JsonNode before = stats();
        int handles = Native.liveHandles();
        try (Registry reg = new Registry()) {
            try (McpMount m = reg.mountMcp(options(McpMount.OAuth.of(browser, REDIRECT).withTokens(store)))) {
                assertEquals("whoami", Json.read(m.infoJson()).path("tools").path("o_whoami").asText());
                ToolResult r = reg.execute(List.of(Call.of("1", "o_whoami", Map.of()))).get(0);
                assertEquals(Outcome.OK, r.outcome(), r.content());
                assertTrue(r.content().contains("at-"), r.content());
            }
            awaitHandles(handles);
            JsonNode after = stats();
            assertEquals(1, after.path("registrations").asInt() - before.path("registrations").asInt());
            assertEquals(1, after.path("authorizations").asInt() - before.path("authorizations").asInt());
            assertEquals(1, urlsSeen.size());
            assertTrue(urlsSeen.get(0).contains("code_challenge_method=S256"), urlsSeen.get(0));
            assertNotNull(stored.get(), "the tokens were saved");
            assertTrue(Json.read(stored.get()).toString().contains("access_token"), stored.get());

            // Another mount with the saved tokens: no registration, no authorization.
            McpMount.Authorizer never = url -> {
                throw new IllegalStateException("not needed");
            };
            try (McpMount m = reg.mountMcp(options(McpMount.OAuth.of(never, REDIRECT).withTokens(store)))) {
                ToolResult r = reg.execute(List.of(Call.of("2", "o_whoami", Map.of()))).get(0);
                assertEquals(Outcome.OK, r.outcome(), r.content());
            }
            JsonNode again = stats();
            assertEquals(after.path("registrations").asInt(), again.path("registrations").asInt());
            assertEquals(after.path("authorizations").asInt(), again.path("authorizations").asInt());
        }
        awaitHandles(handles);
    }

    @Test
    void anAuthorizerThatFailsOrRefusesFailsTheMountSayingSo() throws Exception {
        int handles = Native.liveHandles();
        try (Registry reg = new Registry()) {
            List<McpMount.Authorizer> refusing = List.of(url -> {
                throw new java.io.IOException("the user closed the browser");
            }, url -> null);
            for (McpMount.Authorizer a : refusing) {
                CapstanException e = assertThrows(CapstanException.class,
                        () -> reg.mountMcp(options(McpMount.OAuth.of(a, REDIRECT))));
                assertEquals("CAPSTAN_ERR_MCP_CONNECT", e.status(), e.getMessage());
                assertTrue(e.getMessage().contains("OAuth authorization was refused"), e.getMessage());
            }
            assertEquals(Outcome.UNKNOWN_TOOL,
                    reg.execute(List.of(Call.of("x", "o_whoami", Map.of()))).get(0).outcome(), "nothing mounted");
            // An authorizer without a redirect URI: INVALID_ARGUMENT (and oauth_destroy still runs).
            CapstanException e = assertThrows(CapstanException.class,
                    () -> reg.mountMcp(options(McpMount.OAuth.of(url -> null, null))));
            assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", e.status(), e.getMessage());
        }
        awaitHandles(handles);
    }

    /** Mounts with {@code oauth} and calls whoami (the access token). */
    static void mountWhoami(Registry reg, McpMount.OAuth oauth) throws Exception {
        try (McpMount m = reg.mountMcp(options(oauth))) {
            assertEquals("whoami", Json.read(m.infoJson()).path("tools").path("o_whoami").asText());
            ToolResult r = reg.execute(List.of(Call.of("1", "o_whoami", Map.of()))).get(0);
            assertEquals(Outcome.OK, r.outcome(), r.content());
            assertTrue(r.content().startsWith("at-"), r.content());
        }
    }

    static int grown(JsonNode before, JsonNode after, String counter) {
        return after.path(counter).asInt() - before.path(counter).asInt();
    }

    @Test
    void aClientKeyGetsTokensWithASignedAssertion() throws Exception {
        int handles = Native.liveHandles();
        JsonNode before = stats();
        try (Registry reg = new Registry()) {
            mountWhoami(reg, McpMount.OAuth.ofClientKey("keyed-1", clientKey()));
        }
        JsonNode after = stats();
        assertEquals(1, grown(before, after, "key_grants"), after.toString());
        assertEquals(0, grown(before, after, "client_credentials_grants"), "not with a secret");
        assertEquals(0, grown(before, after, "authorizations"), after.toString());
        awaitHandles(handles);
    }

    @Test
    void aWorkloadAssertionGetsTokensWithTheJwtBearerGrantAndARefusedGrantFailsTheMount() throws Exception {
        int handles = Native.liveHandles();
        JsonNode before = stats();
        List<String> asked = new CopyOnWriteArrayList<>();
        McpMount.Assertion workload = audience -> {
            asked.add(audience);
            return "workload:" + audience; // what the test server takes from its workloads
        };
        try (Registry reg = new Registry()) {
            mountWhoami(reg, McpMount.OAuth.ofAssertion(workload));
            assertEquals(List.of(base), asked, "the audience is the authorization server's issuer");
            assertEquals(1, grown(before, stats(), "jwt_bearer_grants"));

            CapstanException e = assertThrows(CapstanException.class,
                    () -> reg.mountMcp(options(McpMount.OAuth.ofAssertion(workload).withScopes("rejected"))));
            assertEquals("CAPSTAN_ERR_MCP_CONNECT", e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("invalid_scope"), e.getMessage());
            assertEquals(2, asked.size(), "asked once for the refused mount, not again");
            List<McpMount.Assertion> refusing = List.of(audience -> null, audience -> {
                throw new java.io.IOException("no workload identity here");
            });
            for (McpMount.Assertion a : refusing) {
                e = assertThrows(CapstanException.class, () -> reg.mountMcp(options(McpMount.OAuth.ofAssertion(a))));
                assertEquals("CAPSTAN_ERR_MCP_CONNECT", e.status(), e.getMessage());
            }
            assertEquals(Outcome.UNKNOWN_TOOL,
                    reg.execute(List.of(Call.of("x", "o_whoami", Map.of()))).get(0).outcome(), "nothing mounted");
        }
        JsonNode after = stats();
        assertEquals(1, grown(before, after, "jwt_bearer_grants"), after.toString());
        for (String other : List.of("authorizations", "registrations", "client_credentials_grants", "key_grants")) {
            assertEquals(0, grown(before, after, other), "no other grant was tried: " + other);
        }
        awaitHandles(handles);
    }

    @Test
    void optionsWithoutAUserThatCapstanRefusesNameTheProblem() throws Exception {
        int handles = Native.liveHandles();
        McpMount.IdentityProvider idp = new McpMount.IdentityProvider("https://idp.example.com",
                "https://idp.example.com/token", "host-1", null);
        McpMount.OAuth none = McpMount.OAuth.of(null, null);
        Map<String, McpMount.OAuth> cases = Map.of(
                "opts.oauth_idp_* needs opts.oauth_assertion", none.withIdentityProvider(idp),
                "opts.oauth_client_key needs opts.oauth_client_id", none.withClientKey(null, clientKey()),
                "opts.oauth_client_key: ", McpMount.OAuth.ofClientKey("keyed-1",
                        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
                "PKCS#8 EC P-256", McpMount.OAuth.ofClientKey("keyed-1", "not a key"),
                "go together", McpMount.OAuth.ofAssertion(audience -> null).withIdentityProvider(
                        new McpMount.IdentityProvider("https://idp.example.com", null, "h", null)));
        try (Registry reg = new Registry()) {
            for (Map.Entry<String, McpMount.OAuth> c : cases.entrySet()) {
                // never reached: the options fail first
                CapstanException e = assertThrows(CapstanException.class, () -> reg.mountMcp(
                        McpMount.Options.url("http://127.0.0.1:9/mcp").withOAuth(c.getValue())), c.getKey());
                assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", e.status(), e.getMessage());
                assertTrue(e.getMessage().contains(c.getKey()), e.getMessage());
            }
        }
        awaitHandles(handles);
    }
}
