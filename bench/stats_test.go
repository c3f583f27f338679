package bench

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i))
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {99, 99}, {100, 100}, {1, 1}, {0, 1}, {99.5, 100}} {
		if got := Percentile(s, c.p); got != c.want {
			t.Errorf("p%v of 1..100 = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one sample = %v, want 7", got)
	}
}

func TestSummarizeDoesNotReorderInput(t *testing.T) {
	in := []time.Duration{5, 1, 4, 2, 3}
	s := Summarize(in)
	if s.N != 5 || s.P50 != 3 || s.Max != 5 || s.Mean != 3 {
		t.Errorf("Summarize(%v) = %+v", in, s)
	}
	if in[0] != 5 || in[1] != 1 {
		t.Errorf("input was reordered: %v", in)
	}
	if (Summarize(nil) != Summary{}) {
		t.Errorf("Summarize(nil) is not zero")
	}
}
