package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class McpTest {
    @Test
    void aServedRegistrysToolsRunThroughAMountInAnother() {
        try (Registry server = RegistryTest.adder();
                McpServer srv = server.serveMcp(McpServer.Options.DEFAULTS.withBearerToken("s3cret"));
                Registry client = new Registry()) {
            assertTrue(srv.url().startsWith("http://127.0.0.1:"), srv.url());
            try (McpMount m = client.mountMcp(McpMount.Options.url(srv.url()).withPrefix("remote_")
                    .withHeaders(List.of("Authorization: Bearer s3cret")))) {
                JsonNode info = Json.read(m.infoJson());
                assertTrue(info.path("connected").asBoolean(), info.toString());
                assertEquals("add", info.path("tools").path("remote_add").asText());
                List<ToolResult> out = client.execute(List.of(Call.of("1", "remote_add", Map.of("a", 20, "b", 22)),
                        Call.of("2", "remote_add", Map.of("a", "x"))));
                assertEquals(Outcome.OK, out.get(0).outcome());
                assertTrue(out.get(0).content().contains("42"), out.get(0).content());
                // the remote schema is checked locally
                assertEquals(Outcome.INVALID_ARGUMENTS, out.get(1).outcome());
            }
            // unmounted: the tool is gone
            assertEquals(Outcome.UNKNOWN_TOOL,
                    client.execute(List.of(Call.of("3", "remote_add", Map.of("a", 1)))).get(0).outcome());
        }
    }

    @Test
    void aWrongTokenIsAConnectErrorSayingWhy() {
        try (Registry server = RegistryTest.adder();
                McpServer srv = server.serveMcp(McpServer.Options.DEFAULTS.withBearerToken("s3cret"));
                Registry client = new Registry()) {
            CapstanException e = assertThrows(CapstanException.class, () -> client.mountMcp(
                    McpMount.Options.url(srv.url()).withHeaders(List.of("Authorization: Bearer wrong"))
                            .withConnectTimeoutMs(3000)));
            assertEquals("CAPSTAN_ERR_MCP_CONNECT", e.status());
            assertTrue(e.getMessage().contains("initialization"), e.getMessage()); // the step that failed
        }
    }

    @Test
    void anAddressThatIsNotIpPortIsRefused() {
        try (Registry r = new Registry()) {
            CapstanException e = assertThrows(CapstanException.class,
                    () -> r.serveMcp(McpServer.Options.DEFAULTS.withAddress("localhost")));
            assertEquals("CAPSTAN_ERR_INVALID_ARGUMENT", e.status());
        }
    }
}
