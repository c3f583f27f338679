// Package testkit is the scaffolding shared by the tests and benchmarks that run the real resmongw binary: building it once, a private per-user world, child processes started and reaped within bounds, and the searches made of their output.
package testkit

// testkit imports only the standard library (TestStdlibOnly holds it to that), so the
// backend simulator's tests can use it without linking any of the gateway they test.
