package capstan

// OAuth 2.1 for MCP mounts over HTTP (capstan_mcp_mount_options.oauth_*):
// capstan runs the flow; the host's Go funcs show the authorization URL to
// the user, keep the tokens, or give a JWT for a grant without a user. They are called on capstan's MCP threads,
// through one cgo.Handle per mount that capstan's oauth_destroy releases.

// #include "capstan_go.h"
import "C"

import (
	"context"
	"fmt"
	"runtime/cgo"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// OAuth authorizes a mount whose server (at MountOptions.URL) asks for
// OAuth 2.1, as the MCP authorization spec says. When a request is refused
// (401, or 403 insufficient_scope: a step-up), capstan discovers the
// authorization server, registers a client unless ClientID is set (a
// client-id metadata document if the server accepts them, else dynamic
// registration), picks the scopes, builds the authorization URL (PKCE
// S256, state, resource) and calls Authorize with it; then it exchanges
// the code for tokens, refreshes them when they expire or are refused, and
// sends the request again. A request starts at most two authorizations
// (the first and one step-up).
type OAuth struct {
	// Authorize is the user's part: show authURL to the user (open a
	// browser, print it), wait for the authorization server to send them
	// to RedirectURI, and return that whole URL, with its code and state
	// (at most 8192 bytes). An error (or a panic, or "") refuses: while
	// mounting, MountMCP then fails with ErrMCPConnect, wrapping this
	// error. ctx ends after MountOptions.ConnectTimeout (capstan stops
	// waiting then) or when the registry closes. It runs on one of
	// capstan's MCP threads, while mounting or later (a token that can no
	// longer be refreshed, a step-up); it must not Close the mount. nil:
	// no authorization, only the tokens LoadTokens gives.
	Authorize func(ctx context.Context, authURL string) (redirectURL string, err error)
	// RedirectURI is where the authorization server sends the user back,
	// registered with the client (e.g. "http://127.0.0.1:8976/callback").
	// Required with Authorize.
	RedirectURI string
	// ClientID is a client registered with the authorization server
	// beforehand ("": none); ClientSecret its secret for a confidential
	// client.
	ClientID, ClientSecret string
	// ClientMetadataURL is the HTTPS URL of the host's client-id metadata
	// document, used as the client id by servers that accept them.
	ClientMetadataURL string
	// Scopes to ask for; none: the server's choice (its challenge's, else
	// its scopes_supported).
	Scopes []string
	// LoadTokens returns what SaveTokens kept last (nil: nothing, so an
	// authorization). SaveTokens keeps tokens (JSON text with the access
	// and refresh tokens and the client id: a secret, keep it as one) for
	// LoadTokens; nil tokens: forget what was kept. Both are called on
	// capstan's MCP threads. Either way the mount keeps the tokens it got in
	// memory for its life (LoadTokens gives a new mount its first tokens;
	// SaveTokens is told of each change); neither: a new mount authorizes
	// again.
	LoadTokens func() []byte
	SaveTokens func(tokens []byte)

	// With no user to ask (Authorize nil), a mount still gets tokens in
	// one of these ways (DPoP, RFC 9449, is automatic when the
	// authorization server offers ES256):
	//   - ClientID with ClientSecret or ClientKey: the client-credentials
	//     grant (SEP-1046);
	//   - Assertion: the JWT-bearer grant (RFC 7523) with the workload's
	//     identity token from its platform (SEP-1933);
	//   - Assertion and IdentityProvider: enterprise-managed authorization
	//     (SEP-990), the user's ID token exchanged at the identity provider.

	// ClientKey is the PEM text of ClientID's private key (PKCS#8, an EC
	// P-256 key: ES256): the client then authenticates at the token
	// endpoint with a signed assertion (private_key_jwt) instead of
	// ClientSecret, for the client-credentials grant and for the grants of
	// Assertion. Text that is not such a key, or a key without ClientID,
	// fails the mount with ErrInvalidArgument naming
	// opts.oauth_client_key.
	ClientKey string
	// Assertion returns a JWT the host got elsewhere, for audience.
	// Without IdentityProvider it is the workload's identity token, sent in
	// the JWT-bearer grant to the server's authorization server (audience
	// is that server's issuer); with it, the user's ID token from the
	// identity provider (audience is IdentityProvider.Issuer), exchanged
	// there for an ID-JAG that capstan then sends in the JWT-bearer grant,
	// authenticated as ClientID (with its secret or key). An error (or a
	// panic, or "", or a JWT over 16384 bytes) refuses: while mounting,
	// MountMCP then fails with ErrMCPConnect, wrapping this error; a grant
	// the server refuses fails it too, with the server's error, and is not
	// tried again. ctx ends after MountOptions.ConnectTimeout or when the
	// registry closes. Called for each authorization, on one of capstan's
	// MCP threads; it must not Close the mount. Used when Authorize is nil.
	Assertion func(ctx context.Context, audience string) (jwt string, err error)
	// IdentityProvider is the enterprise identity provider where
	// Assertion's ID token is exchanged (SEP-990); it needs Assertion.
	IdentityProvider *IdentityProvider
	// ClientIssuer is the issuer identifier of the authorization server
	// ClientSecret or ClientKey belong to: they are sent there only. ""
	// sends them only to an authorization server of the MCP server's own
	// origin; another one fails the mount (ErrMCPConnect), and nothing is
	// sent.
	ClientIssuer string
}

// IdentityProvider is an enterprise identity provider (OAuth.
// IdentityProvider): Issuer, TokenEndpoint and ClientID (the host's client
// there) are all needed; ClientSecret is "" for a public client.
type IdentityProvider struct {
	Issuer, TokenEndpoint, ClientID, ClientSecret string
}

// oauthHooks is what a mount's OAuth cgo.Handle refers to.
type oauthHooks struct {
	o       OAuth
	parent  context.Context // the registry's: its Close ends Authorize's ctx
	timeout time.Duration

	mu        sync.Mutex
	refusal   error  // why Authorize or Assertion refused last, for MountMCP's error
	refuserBy string // which of them: "Authorize" or "Assertion"
}

// Live OAuth handles, and destroys of a handle already released (a capstan
// bug if ever non-zero); export_test.go reads them.
var oauthLive, oauthDoubleDestroys atomic.Int64

// newOAuthHooks checks the strings of o and makes the hooks (their handle
// comes with fill).
func newOAuthHooks(o *OAuth, parent context.Context, connectTimeout time.Duration) (*oauthHooks, error) {
	strs := []string{o.RedirectURI, o.ClientID, o.ClientSecret, o.ClientMetadataURL, o.ClientKey, o.ClientIssuer}
	if p := o.IdentityProvider; p != nil {
		strs = append(strs, p.Issuer, p.TokenEndpoint, p.ClientID, p.ClientSecret)
	}
	for _, s := range append(strs, o.Scopes...) {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, &Error{Op: "MountMCP", Status: ErrInvalidArgument, Message: "OAuth options must not contain NUL"}
		}
	}
	if connectTimeout == 0 {
		connectTimeout = 10 * time.Second
	}
	return &oauthHooks{o: *o, parent: parent, timeout: connectTimeout}, nil
}

// fill sets the oauth_ fields of opts; str copies a string for the call.
// capstan releases the handle (goOAuthDestroy) exactly once, whatever
// capstan_mcp_mount_new returns: call it right before that.
func (h *oauthHooks) fill(opts *C.capstan_mcp_mount_options, str func(string) *C.char) {
	opts.oauth_redirect_uri = str(h.o.RedirectURI)
	opts.oauth_client_id = str(h.o.ClientID)
	opts.oauth_client_secret = str(h.o.ClientSecret)
	opts.oauth_client_metadata_url = str(h.o.ClientMetadataURL)
	opts.oauth_scopes = str(strings.Join(h.o.Scopes, " "))
	opts.oauth_client_key = str(h.o.ClientKey)
	opts.oauth_client_issuer = str(h.o.ClientIssuer)
	if p := h.o.IdentityProvider; p != nil {
		opts.oauth_idp_issuer = str(p.Issuer)
		opts.oauth_idp_token_endpoint = str(p.TokenEndpoint)
		opts.oauth_idp_client_id = str(p.ClientID)
		opts.oauth_idp_client_secret = str(p.ClientSecret)
	}
	oauthLive.Add(1)
	stored := h.o.LoadTokens != nil || h.o.SaveTokens != nil
	C.cg_mount_oauth(opts, C.uintptr_t(cgo.NewHandle(h)), C.bool(h.o.Authorize != nil), C.bool(stored), C.bool(stored),
		C.bool(h.o.Assertion != nil))
}

// mountError adds why Authorize or Assertion refused to a failed mount's
// error.
func (h *oauthHooks) mountError(err error) error {
	h.mu.Lock()
	refusal, by := h.refusal, h.refuserBy
	h.mu.Unlock()
	if refusal == nil {
		return err
	}
	return fmt.Errorf("%w (OAuth.%s: %w)", err, by, refusal)
}

func (h *oauthHooks) refuse(by string, err error) C.size_t {
	h.mu.Lock()
	h.refusal, h.refuserBy = err, by
	h.mu.Unlock()
	return 0
}

// agreed forgets an earlier refusal: the last answer was good.
func (h *oauthHooks) agreed() {
	h.mu.Lock()
	h.refusal, h.refuserBy = nil, ""
	h.mu.Unlock()
}

// authorize runs Authorize and copies the redirect URL into capstan's room.
func (h *oauthHooks) authorize(authURL string, redirect []byte) (n C.size_t) {
	defer func() {
		if p := recover(); p != nil {
			n = h.refuse("Authorize", fmt.Errorf("Authorize panicked: %v", p))
		}
	}()
	ctx, cancel := context.WithTimeout(h.parent, h.timeout)
	defer cancel()
	url, err := h.o.Authorize(ctx, authURL)
	switch {
	case err != nil:
		return h.refuse("Authorize", err)
	case url == "":
		return h.refuse("Authorize", fmt.Errorf("Authorize returned no redirect URL"))
	case len(url) > len(redirect):
		return h.refuse("Authorize", fmt.Errorf("the redirect URL is %d bytes, more than %d", len(url), len(redirect)))
	}
	h.agreed()
	return C.size_t(copy(redirect, url))
}

// assertion runs Assertion and copies the JWT into capstan's room.
func (h *oauthHooks) assertion(audience string, out []byte) (n C.size_t) {
	defer func() {
		if p := recover(); p != nil {
			n = h.refuse("Assertion", fmt.Errorf("Assertion panicked: %v", p))
		}
	}()
	ctx, cancel := context.WithTimeout(h.parent, h.timeout)
	defer cancel()
	jwt, err := h.o.Assertion(ctx, audience)
	switch {
	case err != nil:
		return h.refuse("Assertion", err)
	case jwt == "":
		return h.refuse("Assertion", fmt.Errorf("Assertion returned no JWT"))
	case len(jwt) > len(out):
		return h.refuse("Assertion", fmt.Errorf("the JWT is %d bytes, more than %d", len(jwt), len(out)))
	}
	h.agreed()
	return C.size_t(copy(out, jwt))
}

// load copies LoadTokens' answer into capstan's room; 0: nothing (tokens
// larger than the room are as good as none: capstan authorizes again).
func (h *oauthHooks) load(buf []byte) (n C.size_t) {
	defer func() {
		if recover() != nil {
			n = 0
		}
	}()
	if h.o.LoadTokens == nil {
		return 0
	}
	tokens := h.o.LoadTokens()
	if len(tokens) > len(buf) {
		return 0
	}
	return C.size_t(copy(buf, tokens))
}

func (h *oauthHooks) save(tokens []byte) {
	if h.o.SaveTokens != nil {
		defer func() { _ = recover() }()
		h.o.SaveTokens(tokens)
	}
}

//export goOAuthAuthorize
func goOAuthAuthorize(hd C.uintptr_t, url *C.char, redirect *C.char, capacity C.size_t) C.size_t {
	h, _ := value(hd).(*oauthHooks)
	if h == nil || h.o.Authorize == nil || url == nil || redirect == nil {
		return 0
	}
	return h.authorize(C.GoString(url), unsafe.Slice((*byte)(unsafe.Pointer(redirect)), int(capacity)))
}

//export goOAuthAssertion
func goOAuthAssertion(hd C.uintptr_t, audience *C.char, out *C.char, capacity C.size_t) C.size_t {
	h, _ := value(hd).(*oauthHooks)
	if h == nil || h.o.Assertion == nil || audience == nil || out == nil {
		return 0
	}
	return h.assertion(C.GoString(audience), unsafe.Slice((*byte)(unsafe.Pointer(out)), int(capacity)))
}

//export goOAuthLoad
func goOAuthLoad(hd C.uintptr_t, buf *C.char, capacity C.size_t) C.size_t {
	h, _ := value(hd).(*oauthHooks)
	if h == nil || buf == nil {
		return 0
	}
	return h.load(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(capacity)))
}

//export goOAuthSave
func goOAuthSave(hd C.uintptr_t, tokens *C.char, n C.size_t) {
	h, _ := value(hd).(*oauthHooks)
	if h == nil {
		return
	}
	var b []byte
	if tokens != nil && n > 0 {
		b = C.GoBytes(unsafe.Pointer(tokens), C.int(n))
	}
	h.save(b)
}

//export goOAuthDestroy
func goOAuthDestroy(hd C.uintptr_t) {
	defer func() {
		if recover() != nil { // released already: never crash for it
			oauthDoubleDestroys.Add(1)
		}
	}()
	cgo.Handle(hd).Delete()
	oauthLive.Add(-1)
}
