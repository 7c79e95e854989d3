package capstan_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	capstan "github.com/capstan-rt/capstan/bindings/go"
)

// oauthServer runs tests/mcp/oauth_server.py: an MCP server (tool whoami)
// that asks for OAuth, and its authorization server, on one port.
type oauthServer struct {
	base string // http://127.0.0.1:PORT
}

func startOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: tests/mcp/oauth_server.py cannot run")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "tests", "mcp", "oauth_server.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, script, "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	port, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("oauth_server.py gave no port: %v", err)
	}
	s := &oauthServer{base: "http://127.0.0.1:" + strings.TrimSpace(port)}
	t.Cleanup(func() {
		if resp, err := (&http.Client{Timeout: soon}).Get(s.base + "/quit"); err == nil {
			resp.Body.Close()
		} else {
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
	})
	return s
}

type oauthStats struct {
	Registrations           int `json:"registrations"`
	Authorizations          int `json:"authorizations"`
	CodeGrants              int `json:"code_grants"`
	ClientCredentialsGrants int `json:"client_credentials_grants"`
	KeyGrants               int `json:"key_grants"`
	JWTBearerGrants         int `json:"jwt_bearer_grants"`
}

func (s *oauthServer) stats(t *testing.T) oauthStats {
	t.Helper()
	resp, err := (&http.Client{Timeout: soon}).Get(s.base + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st oauthStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// browser plays the user's browser: it follows the authorization URL (the
// test server redirects at once) and returns where it was sent.
func browser(ctx context.Context, authURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", authURL, nil)
	if err != nil {
		return "", err
	}
	client := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusFound {
		return "", errors.New("the authorization server answered " + resp.Status)
	}
	return resp.Header.Get("Location"), nil
}

// tokenStore keeps what SaveTokens gives, as a host's keychain would.
type tokenStore struct {
	mu     sync.Mutex
	tokens []byte
	saves  int
}

func (s *tokenStore) load() []byte { s.mu.Lock(); defer s.mu.Unlock(); return s.tokens }

func (s *tokenStore) save(tokens []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens, s.saves = tokens, s.saves+1
}

func (s *oauthServer) mountOptions(o *capstan.OAuth) capstan.MountOptions {
	return capstan.MountOptions{URL: s.base + "/mcp", Prefix: "o_", ProtocolVersion: "2025-11-25",
		ConnectTimeout: 60 * time.Second, MaxReconnects: capstan.NeverReconnect, OAuth: o}
}

// allReleased waits (bounded) for capstan to release every mount's OAuth
// hooks: it may do so on one of its threads soon after the mount let go.
func allReleased(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(soon)
	for {
		live, doubles := capstan.OAuthHandles()
		if doubles != 0 {
			t.Fatalf("OAuth hooks released %d times too many", doubles)
		}
		if live == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mounts' OAuth hooks still held", live)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func whoami(t *testing.T, reg *capstan.Registry) string {
	t.Helper()
	r := execOne(t, reg, call("1", "o_whoami", `{}`))
	if r.Outcome != capstan.OutcomeOK {
		t.Fatalf("%+v", r)
	}
	return r.Content
}

func TestAnOAuthMountAuthorizesThroughGoAndASecondMountUsesTheSavedTokens(t *testing.T) {
	needMCP(t, capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	server := startOAuthServer(t)
	reg := newRegistry(t)
	store := &tokenStore{}
	var asked []string
	var askedMu sync.Mutex
	oauth := &capstan.OAuth{
		Authorize: func(ctx context.Context, authURL string) (string, error) {
			askedMu.Lock()
			asked = append(asked, authURL)
			askedMu.Unlock()
			if _, ok := ctx.Deadline(); !ok {
				return "", errors.New("Authorize's ctx has no deadline")
			}
			return browser(ctx, authURL)
		},
		RedirectURI: "http://127.0.0.1:9/callback",
		LoadTokens:  store.load,
		SaveTokens:  store.save,
	}
	mount, err := reg.MountMCP(server.mountOptions(oauth))
	if err != nil {
		t.Fatal(err)
	}
	first := whoami(t, reg)
	if !strings.HasPrefix(first, "at-") {
		t.Fatalf("whoami %q", first)
	}
	if st := server.stats(t); st.Registrations != 1 || st.Authorizations != 1 || st.CodeGrants != 1 {
		t.Fatalf("stats %+v", st)
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], server.base+"/authorize?") || !strings.Contains(asked[0], "code_challenge_method=S256") {
		t.Fatalf("authorization URLs %q", asked)
	}
	if !strings.Contains(string(store.load()), "access_token") || !strings.Contains(string(store.load()), first) {
		t.Fatalf("saved tokens %q", store.load())
	}
	if err := mount.Close(); err != nil {
		t.Fatal(err)
	}
	allReleased(t)

	// The saved tokens: no registration, no authorization, the same token.
	again, err := reg.MountMCP(server.mountOptions(oauth))
	if err != nil {
		t.Fatal(err)
	}
	if who := whoami(t, reg); who != first {
		t.Fatalf("second mount's token %q, want the saved %q", who, first)
	}
	if st := server.stats(t); st.Registrations != 1 || st.Authorizations != 1 || st.CodeGrants != 1 || len(asked) != 1 {
		t.Fatalf("the second mount authorized again: %+v, %d Authorize calls", st, len(asked))
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	allReleased(t)

	// Half a store: LoadTokens alone uses the saved tokens; SaveTokens
	// alone authorizes (nothing to load), is told of the new tokens, and
	// the mount uses them.
	loadOnly := *oauth
	loadOnly.SaveTokens = nil
	saveOnly := *oauth
	saveOnly.LoadTokens = nil
	fresh := &tokenStore{}
	saveOnly.SaveTokens = fresh.save
	for i, o := range []*capstan.OAuth{&loadOnly, &saveOnly} {
		m, err := reg.MountMCP(server.mountOptions(o))
		if err != nil {
			t.Fatal(i, err)
		}
		who := whoami(t, reg)
		st := server.stats(t)
		switch {
		case i == 0 && (who != first || st.Authorizations != 1):
			t.Fatalf("LoadTokens alone: %q, %+v", who, st)
		case i == 1 && (who == first || st.Authorizations != 2 || !strings.Contains(string(fresh.load()), who)):
			t.Fatalf("SaveTokens alone: %q, %+v, saved %q", who, st, fresh.load())
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		allReleased(t)
	}
}

var errUserSaidNo = errors.New("the user closed the browser")

func TestARefusedOrBadOAuthFailsTheMountAndReleasesTheHooksOnce(t *testing.T) {
	needMCP(t, capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	server := startOAuthServer(t)
	reg := newRegistry(t)
	for name, authorize := range map[string]func(context.Context, string) (string, error){
		"refuses": func(context.Context, string) (string, error) { return "", errUserSaidNo },
		"panics":  func(context.Context, string) (string, error) { panic("no browser") },
	} {
		_, err := reg.MountMCP(server.mountOptions(&capstan.OAuth{Authorize: authorize, RedirectURI: "http://127.0.0.1:9/callback"}))
		var e *capstan.Error
		if !errors.Is(err, capstan.ErrMCPConnect) || !errors.As(err, &e) || !strings.Contains(e.Message, "OAuth authorization was refused") {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "refuses" && !errors.Is(err, errUserSaidNo) {
			t.Fatalf("the Authorize error is not wrapped: %v", err)
		}
		if name == "panics" && !strings.Contains(err.Error(), "Authorize panicked: no browser") {
			t.Fatalf("the panic is not named: %v", err)
		}
		allReleased(t)
	}
	if r := execOne(t, reg, call("1", "o_whoami", `{}`)); r.Outcome != capstan.OutcomeUnknownTool {
		t.Fatalf("a failed mount registered its tools: %+v", r)
	}
	if st := server.stats(t); st.Authorizations != 0 {
		t.Fatalf("stats %+v", st)
	}

	// Options capstan refuses release the hooks too.
	for name, opts := range map[string]capstan.MountOptions{
		"no redirect URI": server.mountOptions(&capstan.OAuth{Authorize: browser}),
		"a command":       {Command: []string{"true"}, OAuth: &capstan.OAuth{Authorize: browser, RedirectURI: "http://127.0.0.1:9/callback"}},
		"a secret alone":  server.mountOptions(&capstan.OAuth{ClientSecret: "s"}),
	} {
		if _, err := reg.MountMCP(opts); !errors.Is(err, capstan.ErrInvalidArgument) {
			t.Fatalf("%s: %v", name, err)
		}
		allReleased(t)
	}
	if _, err := reg.MountMCP(server.mountOptions(&capstan.OAuth{Scopes: []string{"a\x00b"}})); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("NUL: %v", err)
	}
	allReleased(t)
}

// clientKey is the test-only private key of the test server's client
// keyed-1 (tests/fixtures/oauth/client_key.pem).
func clientKey(t *testing.T) string {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join("..", "..", "tests", "fixtures", "oauth", "client_key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem)
}

func TestAClientKeyMountsWithTheClientCredentialsGrantSignedByIt(t *testing.T) {
	needMCP(t, capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	server := startOAuthServer(t)
	reg := newRegistry(t)
	mount, err := reg.MountMCP(server.mountOptions(&capstan.OAuth{ClientID: "keyed-1", ClientKey: clientKey(t)}))
	if err != nil {
		t.Fatal(err)
	}
	if who := whoami(t, reg); !strings.HasPrefix(who, "at-") {
		t.Fatalf("whoami %q", who)
	}
	if err := mount.Close(); err != nil {
		t.Fatal(err)
	}
	allReleased(t)
	// The server checked the ES256 signature of the client assertion with
	// keyed-1's public key: a grant without a secret, and no user.
	if st := server.stats(t); st.KeyGrants != 1 || st.ClientCredentialsGrants != 0 || st.Authorizations != 0 || st.Registrations != 0 {
		t.Fatalf("stats %+v", st)
	}
}

var errNoWorkloadToken = errors.New("the platform gave no identity token")

func TestAWorkloadAssertionMountsWithTheJWTBearerGrantAndARefusalFailsTheMount(t *testing.T) {
	needMCP(t, capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	server := startOAuthServer(t)
	reg := newRegistry(t)
	var mu sync.Mutex
	var audiences []string
	workload := &capstan.OAuth{Assertion: func(ctx context.Context, audience string) (string, error) {
		mu.Lock()
		audiences = append(audiences, audience)
		mu.Unlock()
		if _, ok := ctx.Deadline(); !ok {
			return "", errors.New("Assertion's ctx has no deadline")
		}
		return "workload:" + audience, nil // what the test server takes from its issuer's workload
	}}
	asked := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), audiences...) }
	mount, err := reg.MountMCP(server.mountOptions(workload))
	if err != nil {
		t.Fatal(err)
	}
	if who := whoami(t, reg); !strings.HasPrefix(who, "at-") {
		t.Fatalf("whoami %q", who)
	}
	if err := mount.Close(); err != nil {
		t.Fatal(err)
	}
	allReleased(t)
	if a := asked(); len(a) != 1 || a[0] != server.base {
		t.Fatalf("Assertion was asked for %q, want once for the issuer %q", a, server.base)
	}
	if st := server.stats(t); st.JWTBearerGrants != 1 || st.KeyGrants != 0 || st.ClientCredentialsGrants != 0 || st.Authorizations != 0 {
		t.Fatalf("stats %+v", st)
	}

	// A grant the authorization server refuses fails the mount with its
	// error, not tried again.
	rejected := *workload
	rejected.Scopes = []string{"rejected"}
	_, err = reg.MountMCP(server.mountOptions(&rejected))
	if !errors.Is(err, capstan.ErrMCPConnect) || !strings.Contains(err.Error(), "invalid_scope") {
		t.Fatalf("a refused grant: %v", err)
	}
	allReleased(t)
	if a := asked(); len(a) != 2 {
		t.Fatalf("Assertion asked %d times for two mounts", len(a))
	}

	// The host refusing (an error, a panic, no JWT) fails the mount saying
	// so, its error wrapped; no grant is asked for.
	for name, assertion := range map[string]func(context.Context, string) (string, error){
		"an error": func(context.Context, string) (string, error) { return "", errNoWorkloadToken },
		"a panic":  func(context.Context, string) (string, error) { panic("no platform") },
		"no JWT":   func(context.Context, string) (string, error) { return "", nil },
	} {
		_, err := reg.MountMCP(server.mountOptions(&capstan.OAuth{Assertion: assertion}))
		if !errors.Is(err, capstan.ErrMCPConnect) || !strings.Contains(err.Error(), "OAuth.Assertion") {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "an error" && !errors.Is(err, errNoWorkloadToken) {
			t.Fatalf("the Assertion error is not wrapped: %v", err)
		}
		if name == "a panic" && !strings.Contains(err.Error(), "Assertion panicked: no platform") {
			t.Fatalf("the panic is not named: %v", err)
		}
		allReleased(t)
	}
	if st := server.stats(t); st.JWTBearerGrants != 1 {
		t.Fatalf("stats %+v", st)
	}
	if r := execOne(t, reg, call("1", "o_whoami", `{}`)); r.Outcome != capstan.OutcomeUnknownTool {
		t.Fatalf("a failed mount registered its tools: %+v", r)
	}
}

func TestGrantsWithoutAUserRefuseBadOptionsNamingTheProblem(t *testing.T) {
	needMCP(t, capstan.FeatureMCPMount|capstan.FeatureMCPHTTP)
	reg := newRegistry(t)
	opts := func(o *capstan.OAuth) capstan.MountOptions {
		return capstan.MountOptions{URL: "http://127.0.0.1:9/mcp", MaxReconnects: capstan.NeverReconnect, OAuth: o}
	}
	idp := &capstan.IdentityProvider{Issuer: "https://idp.example", TokenEndpoint: "https://idp.example/token", ClientID: "host"}
	never := func(context.Context, string) (string, error) { return "", errors.New("never asked") }
	for _, c := range []struct {
		name, why string
		o         *capstan.OAuth
	}{
		{"an identity provider without Assertion", "opts.oauth_idp_* needs opts.oauth_assertion",
			&capstan.OAuth{ClientID: "c", ClientSecret: "s", IdentityProvider: idp}},
		{"half an identity provider", "go together",
			&capstan.OAuth{ClientID: "c", Assertion: never, IdentityProvider: &capstan.IdentityProvider{Issuer: "https://idp.example"}}},
		{"a key without a client id", "opts.oauth_client_key needs opts.oauth_client_id",
			&capstan.OAuth{ClientKey: clientKey(t)}},
		{"a key that is not PEM", "opts.oauth_client_key: ",
			&capstan.OAuth{ClientID: "keyed-1", ClientKey: "not a key"}},
		{"PEM that is no key", "opts.oauth_client_key: ",
			&capstan.OAuth{ClientID: "keyed-1", ClientKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}},
	} {
		_, err := reg.MountMCP(opts(c.o))
		var e *capstan.Error
		if !errors.Is(err, capstan.ErrInvalidArgument) || !errors.As(err, &e) || !strings.Contains(e.Message, c.why) {
			t.Fatalf("%s: %v, want ErrInvalidArgument naming %q", c.name, err, c.why)
		}
		allReleased(t)
	}
	if _, err := reg.MountMCP(opts(&capstan.OAuth{ClientID: "c", ClientKey: "a\x00b"})); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("NUL in ClientKey: %v", err)
	}
	if _, err := reg.MountMCP(opts(&capstan.OAuth{Assertion: never, IdentityProvider: &capstan.IdentityProvider{Issuer: "a\x00b"}})); !errors.Is(err, capstan.ErrInvalidArgument) {
		t.Fatalf("NUL in IdentityProvider: %v", err)
	}
	allReleased(t)
}
