package children_test

import (
	"strings"
	"testing"

	"deployobject.dev/controller/pkg/children"
)

// TestBoundNote: an event's note fits the 1024 bytes events.k8s.io/v1
// accepts, cut on a character boundary and marked; a short one is kept.
func TestBoundNote(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short", "updated Deployment web", "updated Deployment web"},
		{"at the limit", strings.Repeat("a", children.MaxEventNote), strings.Repeat("a", children.MaxEventNote)},
		{"one byte over", strings.Repeat("a", children.MaxEventNote+1), strings.Repeat("a", children.MaxEventNote-12) + " [truncated]"},
		// é is two bytes: the cut at 1012 bytes falls inside the 506th.
		{"multi-byte", "x" + strings.Repeat("é", children.MaxEventNote), "x" + strings.Repeat("é", 505) + " [truncated]"},
	} {
		got := children.BoundNote(tc.in)
		if got != tc.want {
			t.Errorf("%s: BoundNote gave %d bytes %q..., want %d bytes", tc.name, len(got), got[:min(len(got), 20)], len(tc.want))
		}
		if len(got) > children.MaxEventNote {
			t.Errorf("%s: %d bytes, over %d", tc.name, len(got), children.MaxEventNote)
		}
	}
}
