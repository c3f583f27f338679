package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/resmongw/resmongw/trustfile"
)

// maxSmallFile bounds how much of a port or token file is read: both hold a few bytes,
// and a huge file is garbage, not a reason to allocate.
const maxSmallFile = 4096

// Candidates lists the ports to try. There is always exactly one: RESMON_PORT when it is
// set (and then the port file is not read), else the port the port file names, else
// DefaultPort only when neither named a port. A value that is set but is not a port is
// reported as Unavailable instead of being skipped: skipping it would widen the search
// to 8742, which may be a different installation.
func Candidates(t Target, r Resolved) ([]Candidate, *Unavailable) {
	c, u, _, _ := candidates(t, r, DefaultPort)
	return c, u
}

// candidates is Candidates with an injectable default port (tests cannot bind 8742) and
// the human chain lines explaining where each port came from.
// blank reports a port file that exists but is empty, which an in-place writer leaves
// between truncating and writing.
func candidates(t Target, r Resolved, defPort int) (cands []Candidate, bad *Unavailable, chain []string, blank bool) {
	var out []Candidate
	add := func(p int, src PortSource) {
		for _, c := range out {
			if c.Port == p {
				return
			}
		}
		out = append(out, Candidate{Port: p, Source: src})
	}

	if t.Port != "" {
		p, ok := parsePort(t.Port)
		if !ok {
			chain = append(chain, fmt.Sprintf("RESMON_PORT is %s, which is not a port", quoteShort(t.Port)))
			return nil, &Unavailable{
				Reason: ReasonBadPortEnv,
				Message: fmt.Sprintf("RESMON_PORT is set to %s, which is not a port (an integer from 1 to 65535). "+
					"Set it to the port resmon listens on, or unset it.", quoteShort(t.Port)),
				Chain: chain,
			}, chain, false
		}
		// A named port is the only candidate (contract v2.3: a named port "never falls through
		// to another port"): the port file is not even read, so a port file naming some other
		// live backend can never answer for a harness that pinned RESMON_PORT.
		chain = append(chain, fmt.Sprintf("port %d from RESMON_PORT, the only candidate (the port file is not read when RESMON_PORT is set)", p))
		add(p, SourceEnv)
		return out, nil, chain, false
	}

	p, present, blank, err := readPortFile(r.PortFile)
	var untrusted *trustfile.Error
	switch {
	case errors.As(err, &untrusted):
		chain = append(chain, fmt.Sprintf("port file (from %s) refused: %v", r.PortFileSource, err))
		return nil, untrustedFile(err, chain), chain, false
	case err != nil:
		line := fmt.Sprintf("port file %s (from %s) %v", r.PortFile, r.PortFileSource, err)
		chain = append(chain, line)
		return nil, &Unavailable{
			Reason: ReasonBadPortFile,
			Message: fmt.Sprintf("The resmon port file %s %v, so the port resmon is using is unknown. "+
				"Restart resmon so it rewrites the file, or set RESMON_PORT.", r.PortFile, err),
			Chain: chain,
		}, chain, false
	case present:
		chain = append(chain, fmt.Sprintf("port %d from the port file %s", p, r.PortFile))
		add(p, SourcePortFile)
	case blank:
		chain = append(chain, fmt.Sprintf("port file %s (from %s) is empty", r.PortFile, r.PortFileSource))
	default:
		chain = append(chain, fmt.Sprintf("port file %s (from %s) is absent", r.PortFile, r.PortFileSource))
	}

	if len(out) == 0 {
		chain = append(chain, fmt.Sprintf("port %d, the default, because neither RESMON_PORT nor the port file named a port", defPort))
		add(defPort, SourceDefault)
	}
	return out, nil, chain, blank
}

// readPortFile returns the port a port file names. A missing or empty (whitespace-only)
// file names no port; an empty file is also what an in-place writer leaves for a moment,
// which the watcher treats as transient. Anything else that is not a port is an error.
func readPortFile(path string) (port int, present, blank bool, err error) {
	data, err := readSmall(path, trustfile.Public)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, false, nil
	}
	if err != nil {
		return 0, false, false, err
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return 0, false, true, nil
	}
	p, ok := parsePort(s)
	if !ok {
		return 0, false, false, fmt.Errorf("holds %s, which is not a port", quoteShort(s))
	}
	return p, true, false, nil
}

// readSmall reads at most maxSmallFile bytes of a file the daemon must trust (see
// trustfile: owned by us, writable by nobody else, a regular file, never through a
// symlink, never blocking on a FIFO), with errors that say what was wrong in words (they end
// up in Chain lines and messages). A refusal is a *trustfile.Error.
func readSmall(path string, kind trustfile.Kind) ([]byte, error) {
	return trustfile.ReadFile(path, kind, maxSmallFile)
}

// parsePort accepts a decimal integer 1–65535, surrounding whitespace allowed.
func parsePort(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 6 {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, false
	}
	return p, true
}

// quoteShort quotes a user-supplied value for a message, cut short so that a stray
// paste (say, a whole file) does not flood it.
func quoteShort(s string) string {
	const max = 40
	if tokenPattern().MatchString(strings.TrimSpace(s)) {
		return "a token-shaped value (not shown)"
	}
	if len(s) > max {
		return strconv.Quote(s[:max]) + "…"
	}
	return strconv.Quote(s)
}
