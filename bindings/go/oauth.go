package capstan

// OAuth 2.1 for MCP mounts over HTTP (capstan_mcp_mount_options.oauth_*):
// capstan runs the flow; the host's Go funcs show the authorization URL to
// the user and keep the tokens. They are called on capstan's MCP threads,
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
}

// oauthHooks is what a mount's OAuth cgo.Handle refers to.
type oauthHooks struct {
	o       OAuth
	parent  context.Context // the registry's: its Close ends Authorize's ctx
	timeout time.Duration

	mu      sync.Mutex
	refusal error // why Authorize refused last, for MountMCP's error
}

// Live OAuth handles, and destroys of a handle already released (a capstan
// bug if ever non-zero); export_test.go reads them.
var oauthLive, oauthDoubleDestroys atomic.Int64

// newOAuthHooks checks the strings of o and makes the hooks (their handle
// comes with fill).
func newOAuthHooks(o *OAuth, parent context.Context, connectTimeout time.Duration) (*oauthHooks, error) {
	for _, s := range append([]string{o.RedirectURI, o.ClientID, o.ClientSecret, o.ClientMetadataURL}, o.Scopes...) {
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
	oauthLive.Add(1)
	stored := h.o.LoadTokens != nil || h.o.SaveTokens != nil
	C.cg_mount_oauth(opts, C.uintptr_t(cgo.NewHandle(h)), C.bool(h.o.Authorize != nil), C.bool(stored), C.bool(stored))
}

// mountError adds why Authorize refused to a failed mount's error.
func (h *oauthHooks) mountError(err error) error {
	h.mu.Lock()
	refusal := h.refusal
	h.mu.Unlock()
	if refusal == nil {
		return err
	}
	return fmt.Errorf("%w (OAuth.Authorize: %w)", err, refusal)
}

func (h *oauthHooks) refuse(err error) C.size_t {
	h.mu.Lock()
	h.refusal = err
	h.mu.Unlock()
	return 0
}

// authorize runs Authorize and copies the redirect URL into capstan's room.
func (h *oauthHooks) authorize(authURL string, redirect []byte) (n C.size_t) {
	defer func() {
		if p := recover(); p != nil {
			n = h.refuse(fmt.Errorf("Authorize panicked: %v", p))
		}
	}()
	ctx, cancel := context.WithTimeout(h.parent, h.timeout)
	defer cancel()
	url, err := h.o.Authorize(ctx, authURL)
	switch {
	case err != nil:
		return h.refuse(err)
	case url == "":
		return h.refuse(fmt.Errorf("Authorize returned no redirect URL"))
	case len(url) > len(redirect):
		return h.refuse(fmt.Errorf("the redirect URL is %d bytes, more than %d", len(url), len(redirect)))
	}
	h.mu.Lock()
	h.refusal = nil
	h.mu.Unlock()
	return C.size_t(copy(redirect, url))
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
