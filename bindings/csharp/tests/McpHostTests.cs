// What an MCP mount asks its C# host (OAuth with and without a user, the
// answers to a server's input requests) and a served C# tool asking its MCP
// client for input. The OAuth server is tests/mcp/oauth_server.py (the MCP
// server and its authorization server in one stdlib-only Python process).
using System;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using Capstan;

internal static partial class Tests
{
    private const string Redirect = "http://127.0.0.1:9/callback";

    private static string RepoTests
    {
        get { return Path.Combine(Environment.GetEnvironmentVariable("CAPSTAN_FIXTURES"), ".."); }
    }

    /// <summary>Waits (bounded) until the handles capstan holds are back to
    /// <paramref name="atMost"/>: a mount's destroy may run soon after it let go, on a capstan thread.</summary>
    private static void AwaitHandles(int atMost)
    {
        for (int i = 0; i < 600 && Capstan.Callbacks.Live > atMost; i++) Thread.Sleep(50);
        Check(Capstan.Callbacks.Live == atMost, "handles held: " + Capstan.Callbacks.Live + ", want " + atMost);
    }

    private sealed class OAuthServer : IDisposable
    {
        private readonly int pid;
        internal readonly string Base;

        internal OAuthServer()
        {
            var portFile = Path.GetTempFileName();
            File.Delete(portFile);
            pid = TestOs.Spawn("exec python3 " + TestOs.Quote(Path.Combine(RepoTests, "mcp", "oauth_server.py")) +
                " 0 > " + TestOs.Quote(portFile) + " 2>/dev/null");
            var port = TestOs.AwaitFile(portFile, t => t.EndsWith("\n")).Trim();
            File.Delete(portFile);
            Base = "http://127.0.0.1:" + port;
        }

        internal long Stat(string counter)
        {
            string location, body;
            TestOs.Get(Base + "/stats", out location, out body);
            return (long)((Dictionary<string, object>)Json.Parse(body))[counter];
        }

        internal McpMountOptions Options(McpOAuth oauth)
        {
            return new McpMountOptions
            {
                Url = Base + "/mcp", Prefix = "o_", ProtocolVersion = "2025-11-25", ConnectTimeoutMs = 60000,
                MaxReconnects = uint.MaxValue, OAuth = oauth,
            };
        }

        public void Dispose()
        {
            TestOs.Kill(pid);
        }
    }

    /// <summary>The user's browser: follows the authorization URL (the test server redirects at once).</summary>
    private static string Browser(string url)
    {
        string location, body;
        int status = TestOs.Get(url, out location, out body);
        if (status != 302) throw new Exception("the authorization server answered " + status + ": " + body);
        return location;
    }

    private static string Whoami(Registry reg)
    {
        var r = reg.Execute("{\"id\":\"1\",\"name\":\"o_whoami\",\"arguments\":{}}")[0];
        Check(r.Outcome == "ok" && r.Content.StartsWith("at-"), r.Outcome + ": " + r.Content);
        return r.Content;
    }

    private static CapstanException MountFails(Registry reg, McpMountOptions o)
    {
        try
        {
            McpMount.Connect(reg, o).Dispose();
        }
        catch (CapstanException e)
        {
            return e;
        }
        throw new Exception("the mount did not fail");
    }

    private const string AskName = "{\"name\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"What is your name?\"," +
        "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}}}";

    /// <summary>ask_name: asks its caller for a name (state "asked-name"), then greets it.</summary>
    private static Registry Asker(List<string> seen)
    {
        var reg = new Registry();
        reg.AddTool("ask_name", "Asks for a name, then greets it.", "{\"type\":\"object\"}", call =>
        {
            lock (seen) seen.Add(call.InputJson);
            var input = call.Input;
            object responses, state;
            input.TryGetValue("inputResponses", out responses);
            input.TryGetValue("requestState", out state);
            var answer = responses == null ? null : (Dictionary<string, object>)((Dictionary<string, object>)responses)["name"];
            if (answer == null || (string)answer["action"] != "accept") throw new InputRequiredException(AskName, "asked-name");
            return "Hello, " + ((Dictionary<string, object>)answer["content"])["name"] + "! (" + state + ")";
        });
        return reg;
    }

    private static void McpHost()
    {
        Run("an OAuth server mounts through Authorize; saved tokens let the next mount in without one; a refusal fails the mount naming it", () =>
        {
            int handles = Capstan.Callbacks.Live;
            using (var server = new OAuthServer())
            using (var reg = new Registry())
            {
                var asked = new List<string>();
                string kept = null;
                var oauth = new McpOAuth
                {
                    Authorize = url => { lock (asked) asked.Add(url); return Browser(url); },
                    RedirectUri = Redirect,
                    LoadTokens = () => kept,
                    SaveTokens = t => kept = t,
                };
                string first;
                using (var m = McpMount.Connect(reg, server.Options(oauth)))
                {
                    Check(m.InfoJson().Contains("\"o_whoami\":\"whoami\""), m.InfoJson());
                    first = Whoami(reg);
                }
                AwaitHandles(handles);
                Check(server.Stat("registrations") == 1 && server.Stat("authorizations") == 1 && server.Stat("code_grants") == 1, "one authorization");
                Check(asked.Count == 1 && asked[0].StartsWith(server.Base + "/authorize?") && asked[0].Contains("code_challenge_method=S256"), string.Join(" ", asked.ToArray()));
                Check(kept != null && kept.Contains("access_token") && kept.Contains(first), "saved tokens: " + kept);

                // The saved tokens: no registration, no authorization, the same token.
                oauth.Authorize = url => { throw new InvalidOperationException("not needed"); };
                using (McpMount.Connect(reg, server.Options(oauth))) Check(Whoami(reg) == first, "the saved token");
                AwaitHandles(handles);
                Check(server.Stat("registrations") == 1 && server.Stat("authorizations") == 1, "authorized again");

                // Refusals: an exception, nothing; the mount fails naming why, nothing is mounted.
                var refusals = new Dictionary<string, Func<string, string>>
                {
                    { "McpOAuth.Authorize threw IOException: the user closed the browser", url => { throw new IOException("the user closed the browser"); } },
                    { "McpOAuth.Authorize returned nothing", url => null },
                };
                foreach (var r in refusals)
                {
                    var e = MountFails(reg, server.Options(new McpOAuth { Authorize = r.Value, RedirectUri = Redirect }));
                    Check(e.Status == "CAPSTAN_ERR_MCP_CONNECT" && e.Message.Contains("OAuth authorization was refused") && e.Message.Contains(r.Key), e.Message);
                    AwaitHandles(handles);
                }
                Check(reg.Execute("{\"id\":\"x\",\"name\":\"o_whoami\"}")[0].Outcome == "unknown_tool", "a failed mount registered its tools");
                Check(server.Stat("authorizations") == 1, "a refused authorization reached the server");

                // Options capstan refuses still release the delegates; a NUL is refused here.
                var bad = MountFails(reg, server.Options(new McpOAuth { Authorize = Browser }));
                Check(bad.Status == "CAPSTAN_ERR_INVALID_ARGUMENT", bad.Message);
                try
                {
                    McpMount.Connect(reg, server.Options(new McpOAuth { Scopes = "a\0b" }));
                    Check(false, "a NUL in the scopes was accepted");
                }
                catch (ArgumentException e)
                {
                    Check(e.Message.Contains("OAuth.Scopes must not contain NUL"), e.Message);
                }
            }
            AwaitHandles(handles);
        });

        Run("without a user: a client key and a workload assertion get tokens; a refused grant or assertion fails the mount; bad options name the problem", () =>
        {
            int handles = Capstan.Callbacks.Live;
            var pem = File.ReadAllText(Path.Combine(Environment.GetEnvironmentVariable("CAPSTAN_FIXTURES"), "oauth", "client_key.pem"));
            using (var server = new OAuthServer())
            using (var reg = new Registry())
            {
                using (McpMount.Connect(reg, server.Options(new McpOAuth { ClientId = "keyed-1", ClientKey = pem }))) Whoami(reg);
                AwaitHandles(handles);
                // The server checked the ES256 signature with keyed-1's public key: no secret, no user.
                Check(server.Stat("key_grants") == 1 && server.Stat("client_credentials_grants") == 0 && server.Stat("authorizations") == 0, "a key grant");

                var audiences = new List<string>();
                Func<string, string> workload = audience => { lock (audiences) audiences.Add(audience); return "workload:" + audience; };
                using (McpMount.Connect(reg, server.Options(new McpOAuth { Assertion = workload }))) Whoami(reg);
                AwaitHandles(handles);
                Check(audiences.Count == 1 && audiences[0] == server.Base, "asked for " + string.Join(" ", audiences.ToArray()));
                Check(server.Stat("jwt_bearer_grants") == 1, "a JWT-bearer grant");

                var refused = MountFails(reg, server.Options(new McpOAuth { Assertion = workload, Scopes = "rejected" }));
                Check(refused.Status == "CAPSTAN_ERR_MCP_CONNECT" && refused.Message.Contains("invalid_scope"), refused.Message);
                Check(audiences.Count == 2, "asked " + audiences.Count + " times for two mounts");
                var none = MountFails(reg, server.Options(new McpOAuth { Assertion = a => { throw new InvalidOperationException("no workload identity here"); } }));
                Check(none.Status == "CAPSTAN_ERR_MCP_CONNECT" && none.Message.Contains("McpOAuth.Assertion threw InvalidOperationException: no workload identity here"), none.Message);
                Check(server.Stat("jwt_bearer_grants") == 1 && server.Stat("authorizations") == 0 && server.Stat("registrations") == 0, "no other grant was tried");
                Check(reg.Execute("{\"id\":\"x\",\"name\":\"o_whoami\"}")[0].Outcome == "unknown_tool", "a failed mount registered its tools");
                AwaitHandles(handles);

                var idp = new McpIdentityProvider("https://idp.example.com", "https://idp.example.com/token", "host-1");
                var cases = new Dictionary<string, McpOAuth>
                {
                    { "opts.oauth_idp_* needs opts.oauth_assertion", new McpOAuth { ClientId = "c", ClientSecret = "s", IdentityProvider = idp } },
                    { "opts.oauth_client_key needs opts.oauth_client_id", new McpOAuth { ClientKey = pem } },
                    { "opts.oauth_client_key: ", new McpOAuth { ClientId = "keyed-1", ClientKey = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" } },
                    { "go together", new McpOAuth { Assertion = workload, IdentityProvider = new McpIdentityProvider("https://idp.example.com", null, "h") } },
                };
                foreach (var c in cases)
                {
                    var e = MountFails(reg, new McpMountOptions { Url = "http://127.0.0.1:9/mcp", OAuth = c.Value });
                    Check(e.Status == "CAPSTAN_ERR_INVALID_ARGUMENT" && e.Message.Contains(c.Key), c.Key + ": " + e.Message);
                }
            }
            AwaitHandles(handles);
        });

        Run("a mounted server's input request is answered by the host in both eras; no answer fails the call saying so", () =>
        {
            int before = Capstan.Callbacks.Live;
            var seen = new List<string>();
            using (var served = Asker(seen))
            using (var server = served.StartMcpServer())
            using (var reg = new Registry())
            {
                int handles = Capstan.Callbacks.Live;
                foreach (var version in new[] { null, "2025-11-25" })
                {
                    var asked = new List<string[]>();
                    var input = new McpInput((tool, method, parameters) =>
                    {
                        lock (asked) asked.Add(new[] { tool, method, parameters });
                        return "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}";
                    });
                    using (McpMount.Connect(reg, new McpMountOptions { Url = server.Url, Prefix = "in_", ProtocolVersion = version, Input = input }))
                    {
                        var r = reg.Execute("{\"id\":\"1\",\"name\":\"in_ask_name\",\"arguments\":{}}")[0];
                        Check(r.Outcome == "ok" && r.Content == "Hello, Ada! (asked-name)", version + ": " + r.Outcome + ": " + r.Content);
                    }
                    Check(asked.Count == 1 && asked[0][1] == "elicitation/create" && asked[0][2].Contains("What is your name?"), version + ": asked " + asked.Count);
                    // A 2026-07-28 request belongs to the call; an older server's names none.
                    Check(asked[0][0] == (version == null ? "in_ask_name" : null), "tool " + asked[0][0]);
                    AwaitHandles(handles);
                }
                var unhandled = new List<Exception>();
                Action<Exception> keep = e => { lock (unhandled) unhandled.Add(e); };
                Hooks.UnhandledException += keep;
                foreach (var answer in new Func<string, string, string, string>[] { (t, m, p) => null, (t, m, p) => { throw new IOException("the user closed the window"); } })
                {
                    using (McpMount.Connect(reg, new McpMountOptions { Url = server.Url, Prefix = "in_", Input = new McpInput(answer) }))
                    {
                        var r = reg.Execute("{\"id\":\"1\",\"name\":\"in_ask_name\",\"arguments\":{}}")[0];
                        Check(r.Outcome == "tool_error" && r.Content.Contains("the host gave no answer to elicitation/create"), r.Content);
                    }
                    AwaitHandles(handles);
                }
                Hooks.UnhandledException -= keep;
                // The answerer's exception is not lost: it reaches Hooks.UnhandledException.
                Check(unhandled.Count == 1 && unhandled[0].Message == "the user closed the window", "unhandled: " + unhandled.Count);
                // Without elicitation declared the server cannot ask: the host is not asked.
                int calls = 0;
                using (McpMount.Connect(reg, new McpMountOptions { Url = server.Url, Prefix = "in_", Input = new McpInput((t, m, p) => { calls++; return null; }, McpInputMethods.Roots) }))
                {
                    var r = reg.Execute("{\"id\":\"1\",\"name\":\"in_ask_name\",\"arguments\":{}}")[0];
                    Check(r.Outcome == "tool_error" && calls == 0, r.Content);
                }
                AwaitHandles(handles);
                try
                {
                    new McpInput((t, m, p) => null, McpInputMethods.None);
                    Check(false, "no method accepted");
                }
                catch (ArgumentException e)
                {
                    Check(e.Message.Contains("name at least one method"), e.Message);
                }
                // A mount capstan fails still releases the answerer.
                try
                {
                    McpMount.Connect(reg, new McpMountOptions { Url = "http://127.0.0.1:1/mcp", ConnectTimeoutMs = 2000, Input = new McpInput((t, m, p) => null) });
                    Check(false, "mounted nothing");
                }
                catch (CapstanException e)
                {
                    Check(e.Status == "CAPSTAN_ERR_MCP_CONNECT", e.Message);
                }
                AwaitHandles(handles);
            }
            AwaitHandles(before);
        });

        Run("a served C# tool asks its MCP client for input: it sees what the client can be asked, the answers and its own state", () =>
        {
            var seen = new List<string>();
            using (var served = Asker(seen))
            using (var server = served.StartMcpServer())
            using (var reg = new Registry())
            {
                foreach (var version in new[] { null, "2025-11-25" })
                {
                    lock (seen) seen.Clear();
                    var input = new McpInput((t, m, p) => "{\"action\":\"accept\",\"content\":{\"name\":\"Grace\"}}", McpInputMethods.Elicitation | McpInputMethods.Roots);
                    using (McpMount.Connect(reg, new McpMountOptions { Url = server.Url, Prefix = "in_", ProtocolVersion = version, Input = input }))
                    {
                        var r = reg.Execute("{\"id\":\"1\",\"name\":\"in_ask_name\",\"arguments\":{}}")[0];
                        Check(r.Content == "Hello, Grace! (asked-name)", r.Content);
                    }
                    Check(seen.Count == 2, version + ": the tool ran " + seen.Count + " times");
                    var first = (Dictionary<string, object>)Json.Parse(seen[0]);
                    var canAsk = (List<object>)first["canAsk"];
                    Check(canAsk.Contains("elicitation/create") && canAsk.Contains("roots/list") && !canAsk.Contains("sampling/createMessage"), seen[0]);
                    var second = (Dictionary<string, object>)Json.Parse(seen[1]);
                    Check((string)second["requestState"] == "asked-name" && seen[1].Contains("\"Grace\""), seen[1]);
                }
            }
        });

        Run("a tool asking a caller that cannot answer, or asking wrongly, ends as a tool error saying why", () =>
        {
            var seen = new List<string>();
            using (var reg = Asker(seen))
            {
                reg.AddAsyncTool("ask_later", "", null, c => System.Threading.Tasks.Task.Run<string>(new Func<string>(() => { throw new InputRequiredException(AskName); })));
                reg.AddTool("ask_ping", "", null, c => { throw new InputRequiredException("{\"k\":{\"method\":\"ping\"}}"); });
                var r = reg.Execute("[{\"id\":\"a\",\"name\":\"ask_name\"},{\"id\":\"b\",\"name\":\"ask_later\"},{\"id\":\"c\",\"name\":\"ask_ping\"}]");
                for (int i = 0; i < 2; i++)
                {
                    Check(r[i].Outcome == "tool_error" && r[i].Content.StartsWith("the tool asked for input (name (elicitation/create)), which its caller cannot give: ") &&
                          r[i].Content.Contains("cannot be asked"), r[i].Content);
                }
                Check(seen.Count == 1 && seen[0] == "{\"canAsk\":[]}", seen.Count > 0 ? seen[0] : "not run");
                Check(r[2].Outcome == "tool_error" && r[2].Content.Contains("must be one of elicitation/create"), r[2].Content);
            }
        });
    }
}
