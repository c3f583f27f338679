package bench

import (
	"slices"
	"time"
)

// Summary describes a set of latencies.
type Summary struct {
	N             int
	P50, P99, Max time.Duration
	Mean          time.Duration
}

// Summarize sorts a copy of lat and takes nearest-rank percentiles (p99 of 100 samples is
// the 99th smallest, not the largest).
func Summarize(lat []time.Duration) Summary {
	if len(lat) == 0 {
		return Summary{}
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Summary{N: len(s), P50: Percentile(s, 50), P99: Percentile(s, 99), Max: s[len(s)-1], Mean: sum / time.Duration(len(s))}
}

// Percentile is the nearest-rank p-th percentile of sorted, which must be sorted and non-empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(p/100*float64(len(sorted)) + 0.999999) // ceil without float surprises at exact ranks
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}
