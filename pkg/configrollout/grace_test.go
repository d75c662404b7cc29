package configrollout

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
)

func TestMissingGrace(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	g := NewMissingGrace(2*time.Minute, func() time.Time { return now })
	web, api := cache.ObjectName{Namespace: "apps", Name: "web"}, cache.ObjectName{Namespace: "apps", Name: "api"}
	if left := g.Left(web); left != 2*time.Minute {
		t.Fatalf("first sight: %s left, want the whole grace", left)
	}
	now = now.Add(90 * time.Second)
	if left := g.Left(web); left != 30*time.Second {
		t.Errorf("90s later: %s left, want 30s", left)
	}
	if left := g.Left(api); left != 2*time.Minute {
		t.Errorf("another DeployObject: %s left, want its own whole grace", left)
	}
	now = now.Add(time.Minute)
	if left := g.Left(web); left != 0 {
		t.Errorf("past the grace: %s left, want 0", left)
	}
	g.Found(web)
	if left := g.Left(web); left != 2*time.Minute {
		t.Errorf("missing again after it was found: %s left, want a new grace", left)
	}
	var none *MissingGrace
	if none.Left(web) != 0 {
		t.Error("a nil MissingGrace gives grace")
	}
}
