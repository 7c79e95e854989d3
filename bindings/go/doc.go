// Package capstan runs tools for LLM agents through capstan, a native tool
// runtime (a Rust library with a C ABI): register Go functions with JSON
// Schemas, hand it the calls a model asked for, get back one result per call
// as text for the model, in the provider's format.
//
//	reg, _ := capstan.New(capstan.Options{})
//	defer reg.Close(context.Background())
//	reg.Register(capstan.Func("add", "Add two integers.",
//		func(ctx context.Context, in struct{ A, B int }) (int, error) { return in.A + in.B, nil }))
//	msgs, err := reg.RunTurn(ctx, capstan.FormatOpenAIChat, responseBody)
//
// capstan validates the arguments against the tool's schema (every problem,
// in words a model can act on), applies timeouts and limits and renders each
// result. The Go side runs the tools on goroutines.
//
// # Building
//
// This is a cgo package. By default it links the library of this checkout:
// run `make lib` (or `cargo build --release --lib`) at the repository root
// first; the rpath makes `go test` and `go run` find it. With the build tag
// capstan_pkgconfig it links an installed library through pkg-config.
//
// # What a Go user still has to know about cgo
//
//   - CGO_ENABLED=1 and a C compiler are needed; cross-compiling needs a C
//     cross toolchain and the library built for the target.
//   - A Registry holds C memory: Close it (no finalizer does).
//   - A lone Execute call without a timeout runs its tool on the calling
//     goroutine inside a cgo call, which pins an OS thread while the tool
//     runs; everything else runs on goroutines. Tools flagged MainThread run
//     inside Pump only, on the pumping goroutine's thread.
//   - A tool's ctx is cancelled when capstan cancels or times out the call;
//     the binding notices within about 2 ms (it polls). A tool that ignores
//     ctx keeps its goroutine; its late result is dropped.
//   - Errors from capstan are *Error values; errors.Is(err, capstan.ErrX)
//     matches on the status. Messages are read on the OS thread of the
//     failing call (capstan keeps them per thread).
package capstan
