package main

import (
	"testing"
	"time"
)

func TestNamespaceTimeoutGrowsWithTheRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, memN int
		want    time.Duration
	}{
		{name: "small run keeps the floor", n: 50, memN: 200, want: 10 * time.Minute},
		{name: "default run, the mem step is the largest", n: 1000, memN: 10000, want: 2*time.Minute + 2000*time.Second},
		{name: "backlog of 10,000 with a small mem step", n: 10000, memN: 200, want: 2*time.Minute + 2000*time.Second},
		{name: "beyond the scale envelope", n: 20000, memN: 10000, want: 2*time.Minute + 4000*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := namespaceTimeout(&options{n: tc.n, memN: tc.memN}); got != tc.want {
				t.Errorf("namespaceTimeout(n=%d, mem-n=%d) = %s, want %s", tc.n, tc.memN, got, tc.want)
			}
		})
	}
}
