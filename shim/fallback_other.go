//go:build !linux && !darwin

package shim

import (
	"errors"
	"net"
)

func socketPair() (ours, theirs *net.UnixConn, err error) {
	return nil, nil, errors.New("not supported on this platform")
}
