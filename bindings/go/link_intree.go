//go:build !capstan_pkgconfig

package capstan

// Links against the library built in this checkout by `make lib`
// (target/release: libcapstan.so on Linux and the BSDs, libcapstan.dylib on
// macOS, on Windows the import library libcapstan.dll.a of capstan.dll), with
// an rpath where the system has one, so that `go test` and `go run` work
// without LD_LIBRARY_PATH. Windows has no rpath: put target/release on PATH
// (or capstan.dll next to the program). Build with `-tags capstan_pkgconfig`
// to use an installed library found by pkg-config instead.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo !windows LDFLAGS: -L${SRCDIR}/../../target/release -Wl,-rpath,${SRCDIR}/../../target/release -lcapstan
// #cgo windows LDFLAGS: -L${SRCDIR}/../../target/release -lcapstan
import "C"
