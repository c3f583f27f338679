//go:build !race

package daemon_test

const raceBuild = false
