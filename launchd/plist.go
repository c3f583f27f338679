// Package launchd holds the launchd LaunchAgent template for resmongw, embedded so the
// installed binary carries it.
package launchd

import _ "embed"

// Plist is the LaunchAgent template, in kardianos/service v1.3.0's template syntax;
// packaging renders it. KeepAlive restarts only after a failure (SuccessfulExit false),
// throttled, so a daemon that exits cleanly is not respawned in a loop. Umask 63 (0077) keeps
// what it creates private; Core limits of 0 keep tokens out of core files (issue 10.8).
//
//go:embed com.resmon.resmongw.plist
var Plist string

// Label is the agent's launchd label (kardianos' Config.Name on macOS).
const Label = "com.resmon.resmongw"

// LogDir is the log directory under the user's home.
const LogDir = "Library/Logs/resmongw"
