package shim

import (
	"errors"
	"fmt"
)

// errRefused marks a socket the shim will not trust (trust_unix.go): it ends the session at
// once, with no autostart and no retry, since waiting cannot make it ours.
var errRefused = errors.New("refused")

type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return e.msg }
func (e *refusedError) Is(target error) bool { return target == errRefused }

func refusef(format string, a ...any) error { return &refusedError{fmt.Sprintf(format, a...)} }
