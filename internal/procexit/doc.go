// Package procexit reports the end of a process by an event (on Linux a pidfd the poller
// waits on), so that nothing has to wake up on a timer to check.
package procexit
