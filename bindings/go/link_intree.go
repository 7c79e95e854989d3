//go:build capstan_intree

package capstan

// With the build tag capstan_intree, links against the library built in this
// checkout by `make lib` (target/release: libcapstan.so on Linux and the
// BSDs, libcapstan.dylib on macOS, on Windows the import library
// libcapstan.dll.a of capstan.dll), with an rpath where the system has one,
// so that `go test -tags capstan_intree` and `go run -tags capstan_intree`
// work without LD_LIBRARY_PATH. Windows has no rpath: put target/release on
// PATH (or capstan.dll next to the program). `make go-test` passes the tag.
// Without it the module links an installed library found by pkg-config
// (link_pkgconfig.go): the only build a module fetched with `go get` has,
// since its copy in the module cache holds no include/ or target/.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo !windows LDFLAGS: -L${SRCDIR}/../../target/release -Wl,-rpath,${SRCDIR}/../../target/release -lcapstan
// #cgo windows LDFLAGS: -L${SRCDIR}/../../target/release -lcapstan
import "C"
