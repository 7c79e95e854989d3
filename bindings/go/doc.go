// Package capstan runs tools for LLM agents through capstan, a native tool
// runtime (a Rust library with a C ABI): register Go functions with JSON
// Schemas, hand it the calls a model asked for, get back one result per call
// as text for the model, in the provider's format.
//
//	reg, _ := capstan.New(capstan.Options{})
//	defer reg.Close()
//	reg.Register(capstan.Func("add", "Add two integers.",
//		func(ctx context.Context, in struct{ A, B int }) (int, error) { return in.A + in.B, nil }))
//	msgs, err := reg.RunTurn(ctx, capstan.FormatOpenAIChat, responseBody)
//
// capstan validates the arguments against the tool's schema (every problem,
// in words a model can act on), applies timeouts and limits and renders each
// result; the tools run on its pool threads or on goroutines (see below).
//
// # Building
//
// This is a cgo package. By default it links an installed library through
// pkg-config (capstan.pc, written by `make install`): what a module fetched
// with `go get` builds.
//
//	make install PREFIX=$HOME/.local        # in a checkout of capstan
//	export PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig
//	go get github.com/capstan-rt/capstan/bindings/go
//
// The program then needs the library at run time (a prefix the dynamic
// linker searches, or LD_LIBRARY_PATH, or an rpath through
// CGO_LDFLAGS=-Wl,-rpath,$HOME/.local/lib). Inside a checkout, the build
// tag capstan_intree links target/release of that checkout instead (run
// `make lib` first), with an rpath: `go test -tags capstan_intree`, as
// `make go-test` does.
//
// # What a Go user still has to know about cgo
//
//   - CGO_ENABLED=1 and a C compiler are needed; cross-compiling needs a C
//     cross toolchain and the library built for the target.
//   - A Registry holds C memory: Close it (no finalizer does).
//   - Where a tool runs: calls that capstan starts on its pool threads (a
//     batch bigger than its limit, Sequential batches, Serial and
//     approval-gated calls) run the Go function on that pool thread, inside a cgo
//     callback; a batch that fits in its limit runs one goroutine per call;
//     a lone Execute call without a timeout and with a ctx that cannot end
//     runs on the calling goroutine, inside the cgo call (at most 64 at
//     once: the others take goroutines). Calls of a Stream run on pool
//     threads (started early with EarlyDispatch), and those Finish starts
//     may run on the finishing goroutine's thread. Tools flagged MainThread
//     run inside Pump only, on the pumping goroutine's thread. A tool run on a thread
//     holds that OS thread until it returns, blocked or not.
//   - A tool's ctx is cancelled when capstan cancels or times out the call;
//     the binding notices within about 2 ms (it polls
//     capstan_call_cancelled for every running call in one cgo call). A
//     tool that ignores ctx keeps running; its late result is dropped.
//   - Tools, hooks, batches and a mount's OAuth funcs reach Go through
//     runtime/cgo.Handle values, never Go pointers; a tool's handle is
//     released in its destroy callback, so a Registry that was closed holds
//     no Go memory, and a mount's OAuth handle when capstan lets go of it
//     (during or soon after Close or a failed MountMCP). The OAuth funcs
//     run on capstan's MCP threads.
//   - Errors from capstan are *Error values; errors.Is(err, capstan.ErrX)
//     matches on the status. Messages are read on the OS thread of the
//     failing call (capstan keeps them per thread).
package capstan
