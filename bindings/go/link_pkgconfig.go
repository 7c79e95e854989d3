//go:build capstan_pkgconfig

package capstan

// Links against an installed library described by capstan.pc.

// #cgo pkg-config: capstan
import "C"
