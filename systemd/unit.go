// Package systemd holds the systemd user unit template for resmongw, embedded so the
// installed binary carries it.
package systemd

import _ "embed"

// Unit is the unit template, in kardianos/service v1.3.0's template syntax
// ({{Key}}, {{Key | fn}}, {{range Key}}…{{end}}); packaging renders it.
//
//go:embed resmongw.service
var Unit string

// Name is the unit's name without the ".service" suffix (kardianos' Config.Name).
const Name = "resmongw"

// UnitName is the unit file's name, as systemctl knows it.
const UnitName = Name + ".service"
