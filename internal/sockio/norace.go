//go:build !race

package sockio

func released() {}
func acquired() {}
