//go:build !linux && !darwin

package paths

// resmongw runs on Linux and macOS only: its trust checks, peer credentials and service
// managers have no stand-in elsewhere, so a build for any other system stops here, by name,
// instead of failing somewhere deep with an undefined symbol.
var _ = resmongwBuildsOnlyForLinuxAndMacOS
