// Package packaging installs resmongw as a per-user service and writes harness configurations.
package packaging
