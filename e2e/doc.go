// Package e2e proves the gateway holds up: real daemon, shim and backend processes under faults, bad input, and the security rules, asserted end to end.
package e2e
