// Package doctor is `resmongw doctor`: one check after another of what a working setup needs,
// each passed or failed with the exact command that fixes it, composed from the facts status,
// discovery and packaging already have.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/resmongw/resmongw/daemonctl"
	"github.com/resmongw/resmongw/discovery"
	"github.com/resmongw/resmongw/ours"
	"github.com/resmongw/resmongw/packaging"
	"github.com/resmongw/resmongw/paths"
	"github.com/resmongw/resmongw/sessionwire"
	"github.com/resmongw/resmongw/statusdoc"
	"github.com/resmongw/resmongw/systemd"
	"github.com/resmongw/resmongw/trustfile"
	"github.com/resmongw/resmongw/version"
	"github.com/spf13/pflag"
)

// Results of a check.
const (
	Pass = "pass"
	Fail = "fail"
	Info = "info" // does not apply here (no service while autostart works, no harness yet)
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Result string `json:"result"`
	Detail string `json:"detail"`
	// Fix is a command (or the one step) that fixes a failed check; safe to paste: it never
	// loosens or tightens a directory others share, and never prints a token.
	Fix string `json:"fix,omitempty"`
}

// Report is every check in order; OK when none failed.
type Report struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Options are `resmongw doctor`'s flags and its environment.
type Options struct {
	JSON   bool
	Socket string
	Getenv func(string) string // nil = os.Getenv
	Cwd    string              // the project directory for project-scoped entries; "" = the working directory
}

// BindFlags declares doctor's flags on fs, bound to o.
func BindFlags(fs *pflag.FlagSet, o *Options) {
	fs.BoolVar(&o.JSON, "json", false, "print the checks as JSON")
	fs.StringVar(&o.Socket, "socket", "", "socket path (default: $"+paths.SocketEnv+" or the per-user default)")
}

// Main runs the checks and prints them: exit 0 when all pass, 1 otherwise, 2 on bad settings.
func Main(o Options, stdout, stderr io.Writer) int {
	rep, err := Run(o)
	if err != nil {
		fmt.Fprintln(stderr, "resmongw doctor:", err)
		return 2
	}
	if o.JSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		Print(stdout, rep)
	}
	if rep.OK {
		return 0
	}
	return 1
}

// Print writes the report for a person: ✓ passed, ✗ failed (with its fix), · information.
func Print(w io.Writer, rep Report) {
	mark := map[string]string{Pass: "✓", Fail: "✗", Info: "·"}
	for _, c := range rep.Checks {
		fmt.Fprintf(w, "%s %s: %s\n", mark[c.Result], c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", c.Fix)
		}
	}
	if rep.OK {
		fmt.Fprintln(w, "all checks passed")
	} else {
		fmt.Fprintln(w, "some checks failed: run each fix above, then 'resmongw doctor' again")
	}
}

// Run performs the checks in order.
func Run(o Options) (Report, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cwd := o.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	socket, err := paths.Socket(o.Socket, getenv)
	if err != nil {
		return Report{}, err
	}
	st, stErr := daemonctl.FetchStatus(socket, getenv)
	var checks []Check
	add := func(c ...Check) { checks = append(checks, c...) }
	add(checkVersion(st, stErr))
	add(checkSocketDir(socket, getenv))
	add(checkDaemon(socket, st, stErr))
	add(checkService(getenv))
	add(checkStateFiles(getenv)...)
	add(checkHarnesses(getenv, cwd, socket, o.Socket != "")...)
	add(checkLog(st, socket))
	rep := Report{OK: true, Checks: checks}
	for _, c := range checks {
		if c.Result == Fail {
			rep.OK = false
		}
	}
	return rep, nil
}

func checkVersion(st *statusdoc.Status, err error) Check {
	c := Check{Name: "version"}
	switch {
	case err != nil:
		c.Result, c.Detail = Info, "this resmongw is "+version.Version+"; no daemon runs to compare with"
	case st.Daemon.Version == version.Version:
		c.Result, c.Detail = Pass, "this resmongw and the running daemon are both "+version.Version
	default:
		c.Result = Fail
		c.Detail = fmt.Sprintf("running %s, installed %s", st.Daemon.Version, version.Version)
		c.Fix = "resmongw restart"
		if self, _ := os.Executable(); st.Daemon.Executable != "" && !st.Daemon.Replaced && self != st.Daemon.Executable {
			c.Detail += fmt.Sprintf(" (the daemon runs %s, this is %s: two installations)", st.Daemon.Executable, self)
			c.Fix = "keep one resmongw: point your harness entries at " + self + ", then resmongw restart"
		}
	}
	return c
}

func checkSocketDir(socket string, getenv func(string) string) Check {
	dir := filepath.Dir(socket)
	c := Check{Name: "socket directory", Result: Pass, Detail: dir + " is yours and private"}
	fault, fi, err := sessionwire.CheckSocketDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		c.Result, c.Detail = Info, dir+" does not exist yet; the daemon creates it (mode 0700) when it starts"
		return c
	}
	if err != nil {
		c.Result, c.Detail = Fail, err.Error()
		return c
	}
	if fault == sessionwire.DirOK {
		c.Detail = fmt.Sprintf("%s is yours, mode %04o", dir, fi.Mode().Perm())
		return c
	}
	c.Result = Fail
	switch fault {
	case sessionwire.DirNotReal:
		c.Detail = dir + " is not a real directory (a symlink or a file)"
	case sessionwire.DirOtherOwner, sessionwire.DirOwnerUnknown:
		c.Detail = dir + " does not belong to you"
	case sessionwire.DirWritableByOthers:
		c.Detail = fmt.Sprintf("%s is writable by others (mode %04o)", dir, fi.Mode().Perm())
	}
	// Tightening a directory is safe only when it is resmongw's own (the default's); any other
	// may be shared (/tmp), so the fix moves the socket to a private place instead.
	def, _ := paths.DefaultSocket()
	if fault == sessionwire.DirWritableByOthers && filepath.Dir(def) == dir {
		c.Fix = "chmod 700 " + shellQuote(dir)
	} else if getenv(paths.SocketEnv) != "" {
		c.Fix = "unset " + paths.SocketEnv + " (the per-user default is private), or point it into a directory of your own with mode 0700"
	} else {
		c.Fix = "resmongw stop; mv " + shellQuote(dir) + " " + shellQuote(dir+".old") + "; resmongw start"
	}
	return c
}

func checkDaemon(socket string, st *statusdoc.Status, err error) Check {
	c := Check{Name: "daemon"}
	switch {
	case err == nil:
		c.Result = Pass
		c.Detail = fmt.Sprintf("pid %d, version %s, up %s", st.Daemon.PID, st.Daemon.Version, time.Duration(st.Daemon.UptimeSeconds*float64(time.Second)).Round(time.Second))
		if st.Daemon.Executable != "" {
			c.Detail += ", from " + st.Daemon.Executable
		}
		if st.Daemon.Replaced {
			c.Detail += " (since replaced on disk; the next session hands over to the new file)"
		}
	case sessionwire.IsDown(err):
		if pid := sessionwire.LockHolder(socket); pid > 0 {
			c.Result, c.Detail, c.Fix = Fail, sessionwire.SocketGone(pid, socket), "resmongw restart"
			return c
		}
		c.Result, c.Detail = Info, "not running; a harness session starts it on demand (or run: resmongw start)"
	case errors.Is(err, sessionwire.ErrRefused):
		c.Result, c.Detail, c.Fix = Fail, "not asked: the socket is refused before a byte is sent", "fix the socket directory (above)"
	default:
		c.Result, c.Detail, c.Fix = Fail, err.Error(), "resmongw restart"
	}
	return c
}

func checkService(getenv func(string) string) Check {
	c := Check{Name: "service"}
	if !daemonctl.ServiceInstalled(getenv) {
		c.Result, c.Detail = Info, "no per-user service installed; harness sessions start the daemon on demand (optional: resmongw install)"
		return c
	}
	c.Result, c.Detail = Pass, "the per-user service is installed"
	if runtime.GOOS != "linux" {
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "systemctl", "--user", "is-enabled", systemd.UnitName).Output()
	state := strings.TrimSpace(string(out))
	switch {
	case state == "enabled":
		c.Detail = "the per-user service is installed and enabled"
	case state != "":
		c.Result, c.Detail, c.Fix = Fail, "the per-user service is installed but "+state, "systemctl --user enable "+systemd.UnitName
	case err != nil:
		c.Result, c.Detail = Info, "the per-user service is installed; systemd could not say whether it is enabled ("+firstLine(err.Error())+")"
	}
	return c
}

// checkStateFiles checks resmon's state directory, port file and token file for the
// environment doctor runs in (the harness's own, when it is launched the same way), then
// whether resmon answers health with a supported identity: discovery's own verification.
func checkStateFiles(getenv func(string) string) []Check {
	target := discovery.TargetFromEnv(getenv)
	ctx, cancel := context.WithTimeout(context.Background(), 2*discovery.ProbeTimeout)
	defer cancel()
	backend, unavail, res, cands := discovery.Discover(ctx, target, nil)
	var out []Check
	dir := Check{Name: "state directory"}
	if err := ownedBy(res.StateDir, true); err != nil {
		dir.Result, dir.Detail, dir.Fix = Fail, describe(res.StateDir, err), "start the resmon app once (it creates "+res.StateDir+"), or set RESMON_STATE_DIR to its state directory"
	} else {
		dir.Result, dir.Detail = Pass, res.StateDir+" ("+res.StateDirSource+") is yours"
	}
	out = append(out, dir)
	pf := Check{Name: "port file"}
	switch err := ownedBy(res.PortFile, false); {
	case errors.Is(err, fs.ErrNotExist):
		pf.Result, pf.Detail = Info, res.PortFile+" does not exist (resmon writes it while running; without it only port "+fmt.Sprint(discovery.DefaultPort)+" is tried)"
	case err != nil:
		pf.Result, pf.Detail, pf.Fix = Fail, describe(res.PortFile, err), "quit resmon, remove "+shellQuote(res.PortFile)+", and start resmon again"
	default:
		pf.Result, pf.Detail = Pass, res.PortFile+" is yours"
	}
	out = append(out, pf)
	tk := Check{Name: "token file"}
	port := 0
	if backend != nil {
		port = backend.Port
	} else if len(cands) > 0 {
		port = cands[0].Port
	}
	if port == 0 {
		tk.Result, tk.Detail = Info, "no port to look for a token file for"
	} else {
		file := discovery.TokenFile(res.StateDir, port)
		_, err := discovery.ReadToken(res.StateDir, port) // the value is dropped here
		var te *trustfile.Error
		switch {
		case err == nil:
			tk.Result, tk.Detail = Pass, file+" holds a token and is yours (the value is never shown)"
		case errors.As(err, &te):
			tk.Result, tk.Detail, tk.Fix = Fail, err.Error(), te.Fix
		case errors.Is(err, fs.ErrNotExist):
			tk.Result, tk.Detail, tk.Fix = Fail, file+" does not exist", "start the resmon app (it writes the token file when it starts)"
		default:
			tk.Result, tk.Detail, tk.Fix = Fail, file+": "+err.Error(), "restart the resmon app (it writes a new token file)"
		}
	}
	out = append(out, tk)
	h := Check{Name: "resmon"}
	switch {
	case backend != nil:
		h.Result = Pass
		h.Detail = fmt.Sprintf("resmon %s answers at %s, runtime %s", backend.Version, backend.BaseURL, orNone(backend.RuntimeID()))
		if backend.Simulated {
			h.Detail += " (SIMULATED: resmongw dev backend)"
		}
	case unavail != nil:
		h.Result, h.Detail, h.Fix = Fail, unavail.Message, "start the resmon app; then: resmongw doctor"
	default:
		h.Result, h.Detail, h.Fix = Fail, "resmon did not answer", "start the resmon app"
	}
	return append(out, h)
}

// checkHarnesses checks each harness entry that launches resmongw: the binary it names exists
// and runs, and its write policy is one the shim accepts. When doctor was pointed at a socket
// other than the per-user default, it says first that the entries reach the default daemon,
// not the one checked (as status warns): "all checks passed" would otherwise vouch for a
// daemon no harness uses.
func checkHarnesses(getenv func(string) string, cwd, socket string, socketFlag bool) []Check {
	home, err := paths.Home(getenv)
	if err != nil {
		return []Check{{Name: "harness entries", Result: Fail, Detail: err.Error()}}
	}
	entries := packaging.Entries(home, cwd)
	if len(entries) == 0 {
		return []Check{{Name: "harness entries", Result: Info,
			Detail: "no harness is set up to launch resmongw yet (resmongw config claude-code, codex, cursor or claude-desktop prints the entry)"}}
	}
	var out []Check
	if def, err := paths.DefaultSocket(); err == nil && filepath.Clean(def) != filepath.Clean(socket) {
		how, undo := paths.SocketEnv+" is set", "unset "+paths.SocketEnv
		if socketFlag {
			how, undo = "--socket names it", "drop --socket"
		}
		out = append(out, Check{Name: "harness socket", Result: Info,
			Detail: fmt.Sprintf("the daemon checked here is a private one at %s (%s); the harness entries below reach the default daemon at %s unless an entry sets %s to the same path",
				socket, how, def, paths.SocketEnv),
			Fix: "to check the daemon your harnesses use: " + undo + ", then resmongw doctor"})
	}
	for _, e := range entries {
		label := e.Harness
		if e.Scope != "" {
			label += " (" + e.Scope + ")"
		}
		c := Check{Name: "harness " + label + " entry " + e.Name, Result: Pass}
		policy, valid := e.WritesPolicy()
		bin, binErr := exec.LookPath(e.Command)
		switch {
		case binErr != nil:
			c.Result, c.Detail = Fail, fmt.Sprintf("%s names %s, which is not an executable file", e.File, e.Command)
			c.Fix = fixEntry(e)
		case !valid:
			c.Result, c.Detail = Fail, fmt.Sprintf("%s: --writes=%s is not ask, harness or off", e.File, policy)
			c.Fix = fixEntry(e)
		default:
			c.Detail = fmt.Sprintf("%s runs %s stdio, writes=%s", e.File, bin, policy)
		}
		out = append(out, c)
	}
	return out
}

// fixEntry is the config command that rewrites an entry with this binary.
func fixEntry(e packaging.Entry) string {
	cmd := "resmongw config " + e.Harness + " --write --force"
	if e.Name != "resmon" {
		cmd += " --name " + shellQuote(e.Name)
	}
	if e.Harness == "claude-code" && e.Scope == "user" {
		cmd += " --scope user"
	}
	return cmd
}

// checkLog checks that the daemon's log can be written: the file the running daemon uses,
// else its place beside the socket.
func checkLog(st *statusdoc.Status, socket string) Check {
	c := checkLogFile(paths.LogFile(socket), filepath.Dir(socket))
	if st != nil && st.Daemon.LogFile != "" {
		c = checkLogFile(st.Daemon.LogFile, filepath.Dir(socket))
	}
	if st != nil && st.Daemon.LogProblem != "" && c.Result != Fail {
		c.Result, c.Detail = Fail, "the daemon logs to stderr, not to a file: "+st.Daemon.LogProblem+" ("+c.Detail+" now)"
		c.Fix = "resmongw restart"
	}
	return c
}

// checkLogFile checks that path can be opened for appending, or created.
func checkLogFile(path, socketDir string) Check {
	c := Check{Name: "log"}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		c.Result, c.Detail = Info, dir+" does not exist yet; the daemon creates it (mode 0700) when it starts"
		return c
	}
	if err := trustfile.CheckHolder(dir); err != nil {
		// Not a chmod: the directory (or one above it) may be shared, as a socket under /tmp
		// puts the log there too. The log goes where the socket goes.
		c.Result, c.Detail = Fail, err.Error()
		c.Fix = "fix the socket directory (above): the log lives beside the socket"
		if dir != socketDir {
			c.Fix = "resmongw stop; then serve with --log-file in a private directory of yours (mode 0700)"
		}
		return c
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if syscall.Access(dir, 2) != nil { // W_OK
			c.Result, c.Detail, c.Fix = Fail, dir+" is not writable", "chmod u+w "+shellQuote(dir)
			return c
		}
		c.Result, c.Detail = Pass, path+" will be created by the daemon"
	case err != nil:
		c.Result, c.Detail, c.Fix = Fail, path+": "+err.Error(), "mv "+shellQuote(path)+" "+shellQuote(path+".old")
	default:
		f.Close()
		if err := ownedBy(path, false); err != nil {
			c.Result, c.Detail, c.Fix = Fail, err.Error(), "mv "+shellQuote(path)+" "+shellQuote(path+".old")
			return c
		}
		c.Result, c.Detail = Pass, path+" is writable"
	}
	return c
}

// ownedBy checks that path exists, is ours, and is a directory (dir) or a regular file.
func ownedBy(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	switch v := ours.File(fi, false); {
	case dir && !fi.IsDir(), !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a %s", path, map[bool]string{true: "directory", false: "regular file"}[dir])
	case v == ours.OtherOwner, v == ours.OwnerUnknown:
		return fmt.Errorf("%s does not belong to you", path)
	}
	return nil
}

// describe says what is wrong with path in words, without the syscall's name.
func describe(path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path + " does not exist"
	case errors.Is(err, fs.ErrPermission):
		return path + " cannot be read (permission denied)"
	}
	return err.Error()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ':' || r == ',' || r == '@' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
