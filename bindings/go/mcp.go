package capstan

// MCP: serving a registry's tools over the Model Context Protocol, and
// mounting an MCP server's tools into a registry (capstan_mcp_*).

// #include "capstan_go.h"
import "C"

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Features are optional parts of the library build (capstan_features_mask).
type Features uint32

// Feature bits.
const (
	FeatureMCPServer Features = C.CAPSTAN_FEATURE_MCP_SERVER // ServeMCP, ServeMCPStdio
	FeatureMCPMount  Features = C.CAPSTAN_FEATURE_MCP_MOUNT  // MountMCP
	FeatureMCPHTTP   Features = C.CAPSTAN_FEATURE_MCP_HTTP   // MCP over streamable HTTP
	FeatureStream    Features = C.CAPSTAN_FEATURE_STREAM     // NewStream (every 0.4 build)
)

// SupportedFeatures says which optional features the linked library has;
// without one, what it names returns ErrUnsupported.
func SupportedFeatures() Features { return Features(C.capstan_features_mask()) }

// MCPServerOptions configure ServeMCP and ServeMCPStdio. Zero values mean
// capstan's defaults.
type MCPServerOptions struct {
	// Address is the IP:PORT to bind (HTTP); "" = 127.0.0.1 and a port the
	// OS picks (read it with URL). A non-loopback address exposes the tools
	// to the network: set BearerToken and AllowedHosts then.
	Address string
	// BearerToken, when set, must come as "Authorization: Bearer <token>"
	// with every request (else 401).
	BearerToken string
	// AllowedOrigins are browser origins accepted besides loopback ones,
	// e.g. "https://app.example.com:443" (others get 403).
	AllowedOrigins []string
	// AllowedHosts are Host values accepted besides localhost, 127.0.0.1
	// and ::1 (others get 403).
	AllowedHosts []string
	// ToolsMeta is what clients see beside each tool's name, description
	// and schema: {"NAME": {"title", "annotations", "outputSchema"}}.
	ToolsMeta json.RawMessage
	// Name is the serverInfo.name clients see; "" = "capstan".
	Name string
	// MaxBodyBytes bounds a POST body (HTTP; larger ones get 413); 0 = 4 MiB.
	MaxBodyBytes int
	// CallTimeout bounds every call from its arrival, approval wait
	// included; 0 = the tools' own timeouts.
	CallTimeout time.Duration
	// StopTimeout is how long stopping waits for calls in flight after
	// cancelling them; 0 = 5 s.
	StopTimeout time.Duration
}

// mcpServerOptions fills C options; free releases their strings.
func mcpServerOptions(op string, o MCPServerOptions) (opts C.capstan_mcp_server_options, free func(), err error) {
	var strs []*C.char
	free = func() {
		for _, p := range strs {
			C.free(unsafe.Pointer(p))
		}
	}
	for _, s := range []string{o.Address, o.BearerToken, o.Name, string(o.ToolsMeta),
		strings.Join(o.AllowedOrigins, ","), strings.Join(o.AllowedHosts, ",")} {
		if strings.IndexByte(s, 0) >= 0 {
			return opts, free, &Error{Op: op, Status: ErrInvalidArgument, Message: "options must not contain NUL"}
		}
	}
	if o.MaxBodyBytes < 0 || int64(o.MaxBodyBytes) > math.MaxUint32 || o.CallTimeout < 0 || o.StopTimeout < 0 {
		return opts, free, &Error{Op: op, Status: ErrInvalidArgument, Message: "sizes and timeouts must be >= 0"}
	}
	str := func(s string) *C.char {
		if s == "" {
			return nil
		}
		p := C.CString(s)
		strs = append(strs, p)
		return p
	}
	opts.struct_size = C.uint32_t(unsafe.Sizeof(opts))
	opts.address = str(o.Address)
	opts.bearer_token = str(o.BearerToken)
	opts.allowed_origins = str(strings.Join(o.AllowedOrigins, ","))
	opts.allowed_hosts = str(strings.Join(o.AllowedHosts, ","))
	opts.tools_meta = str(string(o.ToolsMeta))
	opts.name = str(o.Name)
	opts.max_body_bytes = C.uint32_t(o.MaxBodyBytes)
	opts.call_timeout_ms = millis(o.CallTimeout)
	opts.stop_timeout_ms = millis(o.StopTimeout)
	return opts, free, nil
}

// MCPServer is a registry's tools served over MCP's streamable HTTP.
type MCPServer struct {
	mu  sync.Mutex
	ptr *C.capstan_mcp_server
	url string
}

// ServeMCP serves the registry's tools over MCP (streamable HTTP) on threads
// of capstan's own and returns at once; URL is the endpoint. tools/list is
// the registry as it is at each request (registering a tool notifies
// clients); calls run as Execute runs them. Close it when done.
// ErrTransport when the address cannot be bound, ErrUnsupported without
// FeatureMCPHTTP.
func (r *Registry) ServeMCP(opts MCPServerOptions) (*MCPServer, error) {
	o, free, err := mcpServerOptions("ServeMCP", opts)
	defer free()
	if err != nil {
		return nil, err
	}
	if err := r.enter("ServeMCP"); err != nil {
		return nil, err
	}
	defer r.leave()
	s := &MCPServer{}
	if err := check("ServeMCP", func() C.capstan_status { return C.capstan_mcp_server_start(r.ptr, &o, &s.ptr) }); err != nil {
		return nil, err
	}
	raw, err := takeText("ServeMCP", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_mcp_server_url(s.ptr, out, n)
	})
	if err != nil {
		C.capstan_mcp_server_free(s.ptr)
		return nil, err
	}
	s.url = string(raw)
	return s, nil
}

// URL is the server's endpoint, e.g. "http://127.0.0.1:41234/mcp".
func (s *MCPServer) URL() string { return s.url }

// Stop stops the server: no new connection or call is accepted, calls in
// flight are cancelled and waited for up to StopTimeout, connections are
// closed. ErrTimeout when calls were still running then (they finish in the
// background). A second Stop returns nil.
func (s *MCPServer) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil {
		return nil
	}
	return check("MCPServer.Stop", func() C.capstan_status { return C.capstan_mcp_server_stop(s.ptr) })
}

// Close stops the server if it runs and frees it.
func (s *MCPServer) Close() error {
	err := s.Stop()
	s.mu.Lock()
	p := s.ptr
	s.ptr = nil
	s.mu.Unlock()
	if p != nil {
		C.capstan_mcp_server_free(p)
	}
	return err
}

// ServeMCPStdio serves the registry's tools over MCP on this process's
// stdin and stdout, blocking, until stdin ends (the client went away) or
// the registry is closed from another goroutine. Nothing else may write to
// stdout meanwhile. ErrUnsupported without FeatureMCPServer.
func (r *Registry) ServeMCPStdio(opts MCPServerOptions) error {
	o, free, err := mcpServerOptions("ServeMCPStdio", opts)
	defer free()
	if err != nil {
		return err
	}
	if err := r.enter("ServeMCPStdio"); err != nil {
		return err
	}
	defer r.leave()
	return check("ServeMCPStdio", func() C.capstan_status { return C.capstan_mcp_server_serve_stdio(r.ptr, &o) })
}

// NeverReconnect as MountOptions.MaxReconnects: the mount drops for good
// when its connection dies.
const NeverReconnect = -1

// MountOptions say which MCP server MountMCP mounts: set Command (a server
// speaking MCP on stdio, started as a child process) or URL (streamable
// HTTP), not both.
type MountOptions struct {
	Command []string // program (looked up in PATH) and arguments
	Env     []string // "NAME=VALUE" added to the child's inherited environment
	Dir     string   // the child's working directory; "" = ours
	URL     string   // e.g. "http://127.0.0.1:3001/mcp"
	Headers []string // "Name: value" sent with every HTTP request
	// Prefix goes before every remote tool name to form the local one
	// ("fs_" mounts read as fs_read).
	Prefix string
	// ConnectTimeout bounds connecting plus the first tools/list; 0 = 10 s.
	ConnectTimeout time.Duration
	// CallTimeout is every mounted tool's own timeout; 0 = none.
	CallTimeout time.Duration
	// MaxReconnects in a row after the connection died; 0 = 5,
	// NeverReconnect = never.
	MaxReconnects int
	// ReconnectBackoff is the wait before the first reconnect, doubled
	// after each failed one; 0 = 200 ms.
	ReconnectBackoff time.Duration
	// ProtocolVersion to ask for; "" = the newest capstan speaks.
	ProtocolVersion string
	// OAuth authorizes the mount with a URL whose server asks for OAuth
	// 2.1; nil: none (a server refusing the request fails the mount with
	// ErrMCPConnect). Not with Command.
	OAuth *OAuth
	// Input answers what the server asks while running a tool (a form, a
	// completion, the roots); nil: nothing is answered, nor declared.
	Input *MountInput
}

// Mount is an MCP server's tools mounted into a registry.
type Mount struct {
	mu  sync.Mutex
	ptr *C.capstan_mcp_mount
}

// MountMCP connects to an MCP server and registers each of its tools as
// Prefix + its remote name, with its inputSchema (arguments are validated
// locally). Remote tools that cannot be mounted (a name no provider takes,
// a name already registered, a schema that does not compile) are listed in
// Info().Problems. Blocks until connected, at most about twice
// ConnectTimeout. ErrMCPConnect when the server could not be started,
// reached, initialized or listed, or its OAuth authorization failed or was
// refused (the message says which and why; an error of OAuth.Authorize or
// OAuth.Assertion is wrapped too). Close it to unmount.
func (r *Registry) MountMCP(opts MountOptions) (*Mount, error) {
	bad := func(msg string) error { return &Error{Op: "MountMCP", Status: ErrInvalidArgument, Message: msg} }
	all := append(append(append([]string{opts.Dir, opts.URL, opts.Prefix, opts.ProtocolVersion}, opts.Command...), opts.Env...), opts.Headers...)
	for _, s := range all {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, bad("options must not contain NUL")
		}
	}
	if opts.ConnectTimeout < 0 || opts.CallTimeout < 0 || opts.ReconnectBackoff < 0 || opts.MaxReconnects < NeverReconnect {
		return nil, bad("timeouts and reconnects must be >= 0 (or NeverReconnect)")
	}
	var o C.capstan_mcp_mount_options
	o.struct_size = C.uint32_t(unsafe.Sizeof(o))
	var strs []*C.char
	defer func() {
		for _, p := range strs {
			C.free(unsafe.Pointer(p))
		}
	}()
	str := func(s string) *C.char {
		if s == "" {
			return nil
		}
		p := C.CString(s)
		strs = append(strs, p)
		return p
	}
	list := func(l []string) (**C.char, C.size_t) {
		if len(l) == 0 {
			return nil, 0
		}
		return cStrings(l), C.size_t(len(l))
	}
	argv, argc := list(opts.Command)
	env, envCount := list(opts.Env)
	headers, headerCount := list(opts.Headers)
	defer func() {
		for _, l := range []struct {
			p **C.char
			n C.size_t
		}{{argv, argc}, {env, envCount}, {headers, headerCount}} {
			if l.p != nil {
				freeCStrings(l.p, int(l.n))
			}
		}
	}()
	o.argv, o.argc = argv, argc
	o.env, o.env_count = env, envCount
	o.headers, o.header_count = headers, headerCount
	o.cwd = str(opts.Dir)
	o.url = str(opts.URL)
	o.prefix = str(opts.Prefix)
	o.protocol_version = str(opts.ProtocolVersion)
	o.connect_timeout_ms = millis(opts.ConnectTimeout)
	o.call_timeout_ms = millis(opts.CallTimeout)
	o.reconnect_backoff_ms = millis(opts.ReconnectBackoff)
	if opts.MaxReconnects == NeverReconnect {
		o.max_reconnects = C.CAPSTAN_MCP_RECONNECT_NEVER
	} else {
		o.max_reconnects = C.uint32_t(min(int64(opts.MaxReconnects), math.MaxUint32-1))
	}
	var oauth *oauthHooks
	if opts.OAuth != nil {
		var err error
		if oauth, err = newOAuthHooks(opts.OAuth, r.ctx, opts.ConnectTimeout); err != nil {
			return nil, err
		}
	}
	var input *inputHooks
	if opts.Input != nil {
		var err error
		if input, err = newInputHooks(opts.Input, r.ctx, opts.CallTimeout); err != nil {
			return nil, err
		}
	}
	if err := r.enter("MountMCP"); err != nil {
		return nil, err
	}
	defer r.leave()
	if oauth != nil {
		oauth.fill(&o, str) // released by capstan from here on, whatever happens
	}
	if input != nil {
		input.fill(&o) // likewise
	}
	m := &Mount{}
	if err := check("MountMCP", func() C.capstan_status { return C.capstan_mcp_mount_new(r.ptr, &o, &m.ptr) }); err != nil {
		if oauth != nil {
			err = oauth.mountError(err)
		}
		return nil, err
	}
	return m, nil
}

// MountProblem is a remote tool that was not mounted, and why.
type MountProblem struct {
	Remote  string `json:"remote"`
	Local   string `json:"local"`
	Problem string `json:"problem"`
}

// MountInfo is a mount's state.
type MountInfo struct {
	// What the last connection negotiated: the protocol version, its era
	// ("modern": stateless, 2026-07-28 and later; "legacy": initialize and
	// a session) and the server as it named itself (nil before a connection).
	ProtocolVersion string            `json:"protocol_version"`
	Era             string            `json:"era"`
	Server          *ServerInfo       `json:"server"`
	Connected       bool              `json:"connected"`
	Tools           map[string]string `json:"tools"` // local name: remote name
	Problems        []MountProblem    `json:"problems"`
	Reconnects      int               `json:"reconnects"` // successful reconnects so far
	GaveUp          bool              `json:"gave_up"`    // the reconnect attempts ran out
	LastError       string            `json:"last_error"`
}

// ServerInfo is the name and version a mounted server gave.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Info returns the mount's state. ErrStaleHandle after Close.
func (m *Mount) Info() (MountInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr == nil {
		return MountInfo{}, &Error{Op: "Mount.Info", Status: ErrStaleHandle, Message: "the mount was closed"}
	}
	raw, err := takeText("Mount.Info", func(out **C.char, n *C.size_t) C.capstan_status {
		return C.capstan_mcp_mount_info_json(m.ptr, out, n)
	})
	if err != nil {
		return MountInfo{}, err
	}
	var info MountInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return MountInfo{}, &Error{Op: "Mount.Info", Status: ErrInternal, Message: err.Error()}
	}
	return info, nil
}

// Close unmounts: disconnects (calls in flight end as tool errors saying
// so), stops a child process and unregisters the mount's tools. Blocks about
// 2.5 s at most. A second Close returns nil.
func (m *Mount) Close() error {
	m.mu.Lock()
	p := m.ptr
	m.ptr = nil
	m.mu.Unlock()
	if p == nil {
		return nil
	}
	return check("Mount.Close", func() C.capstan_status { return C.capstan_mcp_mount_free(p) })
}
