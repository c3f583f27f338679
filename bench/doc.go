// Package bench measures the gateway end to end (per-call overhead, cold start, backend swap, scale, answer sizes) against baselines taken in the same run.
package bench
