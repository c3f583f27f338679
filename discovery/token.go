package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/internal/lazyre"
	"github.com/resmongw/resmongw/scrub"
	"github.com/resmongw/resmongw/trustfile"
)

// tokenPattern is the backend's accepted token format (backend §3.2).
var tokenPattern = lazyre.New(`^[A-Za-z0-9_-]{43,128}$`)

// tokenAlphabet matches text made only of token characters: a partial token caught
// mid-write, or an over-long one. Such text is registered with scrub too, because it is
// a piece of a secret; arbitrary junk is not, so scrubbing never mangles ordinary text.
var tokenAlphabet = lazyre.New(`^[A-Za-z0-9_-]+$`)

// Reasons ReadToken gives for a token file it cannot use (besides fs.ErrNotExist).
var (
	ErrTokenEmpty     = errors.New("is empty")
	ErrTokenMalformed = errors.New("does not hold a token (43–128 characters from A–Z a–z 0–9 _ -)")
)

// errTokenMissing words a missing token file and still satisfies errors.Is(err, fs.ErrNotExist).
type errTokenMissing struct{}

func (errTokenMissing) Error() string        { return "does not exist" }
func (errTokenMissing) Is(target error) bool { return target == fs.ErrNotExist }

// TokenFile is the path of the token file for port in stateDir.
func TokenFile(stateDir string, port int) string {
	return filepath.Join(stateDir, TokenFilePrefix+strconv.Itoa(port))
}

// ReadToken reads <stateDir>/api-token-<port>, trims it and checks its shape. The file
// must pass trustfile's checks as a secret (ours, 0600 or stricter, a regular file, not a
// symlink, in a directory only we can write); a refusal is a *trustfile.Error and the file
// is not read at all. Every
// token-like value it reads, usable or not, is registered with scrub first, so a stale
// token can never leak through a log or an error later. Errors never contain the value.
func ReadToken(stateDir string, port int) (Token, error) {
	path := TokenFile(stateDir, port)
	data, err := readSmall(path, trustfile.Secret)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("token file %s %w", path, errTokenMissing{})
		}
		var untrusted *trustfile.Error
		if errors.As(err, &untrusted) {
			return "", fmt.Errorf("token file %w", err) // the refusal names the path itself
		}
		return "", fmt.Errorf("token file %s %w", path, err)
	}
	s := strings.TrimSpace(string(data))
	if tokenAlphabet().MatchString(s) {
		scrub.Add(s)
	}
	switch {
	case s == "":
		return "", fmt.Errorf("token file %s %w", path, ErrTokenEmpty)
	case !tokenPattern().MatchString(s):
		return "", fmt.Errorf("token file %s %w", path, ErrTokenMalformed)
	}
	return Token(s), nil
}

// tokenTransient reports whether a token error looks like a write caught halfway: the
// watcher retries those shortly instead of reporting them at once.
func tokenTransient(err error) bool {
	return errors.Is(err, ErrTokenEmpty) || errors.Is(err, ErrTokenMalformed)
}
