//go:build !capstan_pkgconfig

package capstan

// Links against the library built in this checkout by `make lib`
// (target/release/libcapstan.so), with an rpath so that `go test` and
// `go run` work without LD_LIBRARY_PATH. Build with `-tags capstan_pkgconfig`
// to use an installed library found by pkg-config instead.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -Wl,-rpath,${SRCDIR}/../../target/release -lcapstan
import "C"
