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

    static List<String> childArgv(String... args) {
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> argv = new java.util.ArrayList<>(List.of(javaBin, "--enable-native-access=ALL-UNNAMED",
                "-Dcapstan.lib=" + Registry.librarySource(), "-cp", System.getProperty("java.class.path"),
                "dev.capstan.StdioServerMain"));
        argv.addAll(List.of(args));
        return argv;
    }

    @Test
    void closingTheRegistryStopsServingStdio() throws Exception {
        Process p = new ProcessBuilder(childArgv("close-on-stop")).start();
        try {
            var in = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8));
            var out = p.getOutputStream();
            out.write(("""
                    {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",                    "capabilities":{},"clientInfo":{"name":"test","version":"1"}}}
                    {"jsonrpc":"2.0","method":"notifications/initialized"}
                    {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}
                    """).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            out.flush();
            JsonNode init = Json.read(in.readLine());
            assertEquals("capstan", init.path("result").path("serverInfo").path("name").asText(), init.toString());
            JsonNode add = Json.read(in.readLine());
            assertEquals("{\"sum\":2}", add.path("result").path("content").get(0).path("text").asText(), add.toString());
            out.write("""
                    {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stop","arguments":{}}}
                    """.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            out.flush();
            // the stop call's own result may be "stopping" or cancelled by the close it triggers
            // stdin stays open: only the registry's close ends the server, and with it the process
            assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "the server did not stop");
            assertEquals(0, p.exitValue());
            String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(err.contains("stdio server: closed"), err);
        } finally {
            p.destroyForcibly();
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
