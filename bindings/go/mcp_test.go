package capstan_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// serveStdioEnv makes this test binary, started again as a child process,
// an MCP server on stdio (TestMain), for the command mount test.
const serveStdioEnv = "CAPSTAN_GO_TEST_SERVE_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(serveStdioEnv) == "1" {
		os.Exit(serveStdio())
	}
	os.Exit(m.Run())
}

func serveStdio() int {
	reg, err := capstan.New(capstan.Options{})
	if err != nil {
		return 1
	}
	defer reg.Close()
	if reg.Register(addTool()) != nil || reg.ServeMCPStdio(capstan.MCPServerOptions{Name: "go-test"}) != nil {
		return 1
	}
	return 0
}

func needMCP(t *testing.T, f capstan.Features) {
	t.Helper()
	if capstan.SupportedFeatures()&f != f {
		t.Skip("the library was built without this MCP feature")
	}
}

func TestServeAndMountOverHTTP(t *testing.T) {
	needMCP(t, capstan.FeatureMCPServer|capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	server := newRegistry(t, addTool())
	srv, err := server.ServeMCP(capstan.MCPServerOptions{BearerToken: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), "/mcp") {
		t.Fatalf("url %q", srv.URL())
	}
	client := newRegistry(t)
	if _, err := client.MountMCP(capstan.MountOptions{URL: srv.URL(), Prefix: "remote_", MaxReconnects: capstan.NeverReconnect}); !errors.Is(err, capstan.ErrMCPConnect) {
		t.Fatalf("no bearer token: %v", err)
	}
	mount, err := client.MountMCP(capstan.MountOptions{URL: srv.URL(), Prefix: "remote_",
		Headers: []string{"Authorization: Bearer s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := mount.Info()
	if err != nil || !info.Connected || info.Tools["remote_add"] != "add" || len(info.Problems) != 0 {
		t.Fatalf("info %+v %v", info, err)
	}
	// capstan's server and mount speak 2026-07-28 by default.
	if info.Era != "modern" || info.ProtocolVersion != "2026-07-28" || info.Server == nil || info.Server.Name == "" {
		t.Fatalf("negotiated %q %q %+v", info.Era, info.ProtocolVersion, info.Server)
	}
	if r := execOne(t, client, call("1", "remote_add", `{"a":2,"b":3}`)); r.Outcome != capstan.OutcomeOK || r.Content != "5" {
		t.Fatalf("%+v", r)
	}
	// The remote schema is checked locally.
	if r := execOne(t, client, call("2", "remote_add", `{"a":"x"}`)); r.Outcome != capstan.OutcomeInvalidArguments {
		t.Fatalf("%+v", r)
	}
	if err := mount.Close(); err != nil {
		t.Fatal(err)
	}
	if r := execOne(t, client, call("3", "remote_add", `{"a":2,"b":3}`)); r.Outcome != capstan.OutcomeUnknownTool {
		t.Fatalf("after unmount: %+v", r)
	}
	if _, err := mount.Info(); !errors.Is(err, capstan.ErrStaleHandle) {
		t.Fatalf("info after close: %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.MountMCP(capstan.MountOptions{URL: srv.URL(), Headers: []string{"Authorization: Bearer s3cret"},
		MaxReconnects: capstan.NeverReconnect}); !errors.Is(err, capstan.ErrMCPConnect) {
		t.Fatalf("a stopped server: %v", err)
	}
	if _, err := server.ServeMCP(capstan.MCPServerOptions{Address: "not an address"}); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("bad address: %v", err)
	}
}

func TestMountACommandServingStdio(t *testing.T) {
	needMCP(t, capstan.FeatureMCPServer|capstan.FeatureMCPMount)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	client := newRegistry(t)
	mount, err := client.MountMCP(capstan.MountOptions{Command: []string{exe, "-test.run=^$"},
		Env: []string{serveStdioEnv + "=1"}, Prefix: "child_"})
	if err != nil {
		t.Fatal(err)
	}
	defer mount.Close()
	if r := execOne(t, client, call("1", "child_add", `{"a":40,"b":2}`)); r.Outcome != capstan.OutcomeOK || r.Content != "42" {
		t.Fatalf("%+v", r)
	}
	if _, err := client.MountMCP(capstan.MountOptions{}); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("neither command nor url: %v", err)
	}
}
