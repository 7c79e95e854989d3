//go:build !capstan_intree

package capstan

// The default build: links against an installed library described by
// capstan.pc (`make install`, or a distribution's package), found by
// pkg-config (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig for a prefix it does not
// search). This is what a module fetched with `go get` builds. The in-tree
// build of this checkout is behind the tag capstan_intree (link_intree.go).

// #cgo pkg-config: capstan
import "C"
