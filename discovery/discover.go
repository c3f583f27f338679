package discovery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/resmongw/resmongw/trustfile"
)

// Options tune Discover. The zero value (or nil) means the contract's defaults.
type Options struct {
	ProbeTimeout time.Duration    // per health probe; default 3 s
	MinVersion   string           // oldest backend accepted; default "1.8.0"
	Now          func() time.Time // clock for VerifiedAt; default time.Now

	// defaultPort replaces 8742 in tests, which cannot safely bind the real default
	// but must prove it is never probed when a port was named.
	defaultPort int
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.ProbeTimeout <= 0 {
		out.ProbeTimeout = ProbeTimeout
	}
	if out.MinVersion == "" {
		out.MinVersion = MinBackendVersion
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.defaultPort == 0 {
		out.defaultPort = DefaultPort
	}
	return out
}

// discoveryResult is one full discovery pass.
type discoveryResult struct {
	backend    *Backend
	unavail    *Unavailable
	resolved   Resolved
	candidates []Candidate
	// transient marks a failure that looks like a file caught mid-write (an empty port
	// file, an empty or partial token): the watcher retries it before reporting it.
	transient bool
}

// Discover finds and verifies the backend t means, following the reference (§5.2–5.3):
// for each candidate port, read its token from the state directory, probe /api/health
// with it, check the version and identity, and stop at the first that passes. On failure
// the Unavailable carries the reference's message (precedence rejected, token_refused,
// no_token, not running), the lists, and a Chain explaining each link.
func Discover(ctx context.Context, t Target, opts *Options) (*Backend, *Unavailable, Resolved, []Candidate) {
	r := discover(ctx, t, opts)
	return r.backend, r.unavail, r.resolved, r.candidates
}

func discover(ctx context.Context, t Target, opts *Options) discoveryResult {
	o := opts.withDefaults()
	res := discoveryResult{resolved: t.Resolve()}
	r := res.resolved
	minVer, ok := parseVersion(o.MinVersion)
	if !ok {
		minVer, _ = parseVersion(MinBackendVersion)
	}

	var chain []string
	stateDirOK := true
	stateLine := fmt.Sprintf("state dir %s (from %s)", r.StateDir, stateDirSourceLabel(r.StateDirSource))
	if r.StateDir == "" {
		res.unavail = &Unavailable{
			Reason: ReasonBadStateDir,
			Message: "resmon's state directory cannot be worked out: neither RESMON_STATE_DIR nor HOME is set. " +
				"Set RESMON_STATE_DIR to the state directory of the instance you mean.",
			Chain: []string{"state dir unknown: neither RESMON_STATE_DIR nor HOME is set"},
		}
		return res
	}
	// StrictModes before a byte is read: a state directory someone else can write is one
	// where they choose the port file and the token file, and so where our token goes.
	var untrusted *trustfile.Error
	switch err := trustfile.CheckDir(r.StateDir); {
	case err == nil:
		chain = append(chain, stateLine+" exists")
	case errors.Is(err, fs.ErrNotExist):
		// Not fatal: every candidate becomes no_token, naming the directory.
		stateDirOK = false
		chain = append(chain, stateLine+" does not exist — resmon has never run with this state dir")
	case errors.As(err, &untrusted):
		chain = append(chain, stateLine+" refused: "+err.Error())
		res.unavail = untrustedFile(err, chain)
		res.unavail.Tried = []string{}
		return res
	case trustfile.ErrNotDir(err):
		chain = append(chain, stateLine+" is not a directory")
		res.unavail = badStateDir(r, "is not a directory", chain)
		return res
	default:
		chain = append(chain, fmt.Sprintf("%s cannot be read (%v)", stateLine, err))
		res.unavail = badStateDir(r, fmt.Sprintf("cannot be read (%v)", err), chain)
		return res
	}

	cands, bad, candChain, blank := candidates(t, r, o.defaultPort)
	chain = append(chain, candChain...)
	res.candidates = cands
	if bad != nil {
		bad.Chain = chain
		bad.Tried = []string{}
		res.unavail = bad
		return res
	}
	res.transient = blank

	u := &Unavailable{Tried: []string{}}
	var badHealth []string
	var lowVersions []string
	var refusedFile, refusedListener error
	for _, c := range cands {
		base := "http://127.0.0.1:" + strconv.Itoa(c.Port)
		u.Tried = append(u.Tried, base)
		tok, err := ReadToken(r.StateDir, c.Port)
		if errors.As(err, &untrusted) {
			chain = append(chain, "token file refused: "+err.Error())
			refusedFile = err
			continue
		}
		if err != nil {
			u.NoToken = append(u.NoToken, base)
			if stateDirOK {
				chain = append(chain, tokenErrLine(err))
			}
			if tokenTransient(err) {
				res.transient = true
			}
			continue
		}
		tokenFile := TokenFile(r.StateDir, c.Port)
		chain = append(chain, "token file "+tokenFile+" present")
		pr := probeHealth(ctx, c.Port, tok, o.ProbeTimeout, minVer)
		chain = append(chain, describeProbe(base, pr))
		switch pr.outcome {
		case probeUntrusted:
			refusedListener = pr.err
		case probeRefused:
			u.TokenRefused = append(u.TokenRefused, base)
		case probeBadBody:
			badHealth = append(badHealth, base)
		case probeVersionLow:
			u.Rejected = append(u.Rejected, base+" (v"+versionLabel(pr.version)+")")
			lowVersions = append(lowVersions, versionLabel(pr.version))
		case probeOK:
			if pr.idNote != "" {
				chain = append(chain, pr.idNote)
			}
			res.backend = &Backend{
				BaseURL:    base,
				Port:       c.Port,
				PortSource: c.Source,
				StateDir:   r.StateDir,
				TokenFile:  tokenFile,
				Token:      tok,
				Version:    pr.version,
				Identity:   pr.identity,
				Simulated:  pr.simulated,
				pid:        pr.pid,
				VerifiedAt: o.Now(),
				Chain:      chain,
			}
			res.transient = false
			return res
		}
	}

	switch {
	case refusedFile != nil:
		uf := untrustedFile(refusedFile, chain)
		uf.Tried = u.Tried
		res.unavail = uf
		return res
	case refusedListener != nil:
		u.Reason = ReasonUntrustedListener
		u.Message = fmt.Sprintf("Something is listening on %s, but it is not resmon run by you: %v. "+
			"The token was not sent to it. If resmon crashed, start it again; another user's program may be holding its port.",
			u.Tried[len(u.Tried)-1], refusedListener)
	case len(u.Rejected) > 0:
		u.Reason = ReasonVersionRejected
		u.Message = fmt.Sprintf("Found a resmon backend, but it is version %s, which this MCP server cannot speak for "+
			"(it needs %s or later). That is usually an older resmon still running in the background. "+
			"Start the current app and try again.", lowVersions[0], o.MinVersion)
	case len(u.TokenRefused) > 0:
		u.Reason = ReasonTokenRefused
		u.Message = fmt.Sprintf("resmon at %s refused the local API token found for it. The token file is left over "+
			"from an earlier run of that port; start resmon again, or point RESMON_STATE_DIR at the instance you mean.",
			u.TokenRefused[0])
	case len(u.NoToken) > 0:
		u.Reason = ReasonNoToken
		u.Message = fmt.Sprintf("No local API token was found for resmon at %s (looked in %s). Start resmon, or set "+
			"RESMON_STATE_DIR to the state directory of the instance you mean.", u.NoToken[0], r.StateDir)
	case len(badHealth) > 0:
		// The reference would call this "not running"; a port that answers 200 with junk
		// is something else listening there, and saying so saves a confused user time.
		u.Reason = ReasonBadHealth
		u.Message = fmt.Sprintf("Something at %s answered /api/health, but not with resmon's health object. "+
			"Another program may be using that port; check RESMON_PORT and the port file, and restart resmon.", badHealth[0])
	default:
		u.Reason = ReasonNotRunning
		u.Message = "resmon is not running. Start the resmon app and try again."
	}
	u.Chain = chain
	res.unavail = u
	return res
}

// untrustedFile is the answer when a file or directory fails trustfile's checks: it names
// the path, the owner and mode found and the fix, and says that nothing was sent.
func untrustedFile(err error, chain []string) *Unavailable {
	return &Unavailable{
		Reason: ReasonUntrustedFile,
		Message: "resmon's files cannot be trusted, so the gateway did not read them or send a token anywhere: " +
			err.Error() + ".",
		Chain: chain,
	}
}

func badStateDir(r Resolved, what string, chain []string) *Unavailable {
	return &Unavailable{
		Reason: ReasonBadStateDir,
		Message: fmt.Sprintf("resmon's state directory %s %s. Set RESMON_STATE_DIR to the state directory of the "+
			"instance you mean.", r.StateDir, what),
		Tried: []string{},
		Chain: chain,
	}
}

func stateDirSourceLabel(src string) string {
	if src == "default" {
		return "the platform default"
	}
	return src
}

// tokenErrLine words a ReadToken error for the chain; it never holds the token.
func tokenErrLine(err error) string { return err.Error() }
