//go:build !linux

package oneproc

// Off Linux there is no /proc/self/exe to run ourselves again with: the shim takes its one P
// in its Main, after the inits (the shim's memory is measured on Linux).
