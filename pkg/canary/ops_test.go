package canary

import (
	"testing"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

func TestOpsFrom(t *testing.T) {
	got := OpsFrom(map[string]string{
		appv1.AnnotationCanaryPromote:     " abc-1/3\n",
		appv1.AnnotationCanaryPromoteFull: "abc-1",
		appv1.AnnotationCanaryAbort:       "abc-2",
		appv1.AnnotationCanaryRetry:       "abc-3",
		"unrelated":                       "x",
	})
	want := Ops{Promote: "abc-1/3", PromoteFull: "abc-1", Abort: "abc-2", Retry: "abc-3"}
	if got != want {
		t.Errorf("OpsFrom = %+v, want %+v", got, want)
	}
	if got := OpsFrom(nil); got != (Ops{}) {
		t.Errorf("OpsFrom(nil) = %+v, want none", got)
	}
}

func TestPromotes(t *testing.T) {
	for _, tc := range []struct {
		value string
		id    string
		step  int32
		want  bool
	}{
		{"abc-1/3", "abc-1", 3, true},
		{"abc-1/3", "abc-1", 1, false},
		{"abc-1/3", "abc-2", 3, false},
		{"abc-1", "abc-1", 3, false},
		{"abc-1/03", "abc-1", 3, false},
		{"", "abc-1", 0, false},
	} {
		if got := (Ops{Promote: tc.value}).promotes(tc.id, tc.step); got != tc.want {
			t.Errorf("promote %q of canary %s at step %d: %t, want %t", tc.value, tc.id, tc.step, got, tc.want)
		}
	}
}
