//go:build !linux && !darwin

package packaging

func newPlatform(string) (*servicePlatform, error) { return nil, errUnsupported }
