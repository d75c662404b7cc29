package configrollout

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func limiterForTest(limit int) (*Limiter, *fakeClock, *[]cache.ObjectName) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	var woken []cache.ObjectName
	l := NewLimiter(limit, time.Minute, func(k cache.ObjectName) { woken = append(woken, k) })
	l.now = clock.now
	return l, clock, &woken
}

func slot(i int) cache.ObjectName {
	return cache.ObjectName{Namespace: "apps", Name: fmt.Sprintf("app-%d", i)}
}

func TestRolloutLimiterHoldsToTheLimit(t *testing.T) {
	l, _, woken := limiterForTest(2)
	for i := range 5 {
		got := l.Acquire(slot(i))
		if want := i < 2; got != want {
			t.Errorf("acquire(%d) = %v, want %v", i, got, want)
		}
	}
	if active, pending := l.Counts(); active != 2 || pending != 3 {
		t.Errorf("counts = %d active, %d pending; want 2, 3", active, pending)
	}
	if !l.Acquire(slot(0)) {
		t.Error("a holder asking again must keep its slot")
	}
	if l.Acquire(slot(3)) {
		t.Error("a waiter asking again must keep waiting")
	}
	if _, pending := l.Counts(); pending != 3 {
		t.Errorf("asking again joined the line twice: %d pending", pending)
	}
	if len(*woken) != 0 {
		t.Errorf("woken %v before any slot was freed", *woken)
	}
}

// TestRolloutLimiterIsFair: slots go to the waiters in order of arrival,
// and a newcomer does not overtake them.
func TestRolloutLimiterIsFair(t *testing.T) {
	l, _, woken := limiterForTest(1)
	for i := range 4 {
		l.Acquire(slot(i))
	}
	l.Finish(slot(0), true)
	if l.Acquire(slot(9)) {
		t.Error("a newcomer took the slot handed to the first waiter")
	}
	if !l.Acquire(slot(1)) {
		t.Error("the first waiter did not get the freed slot")
	}
	l.Finish(slot(1), true)
	l.Finish(slot(2), true) // gave up waiting (its configuration was reverted)
	l.Finish(slot(3), true)
	if want := []cache.ObjectName{slot(1), slot(2), slot(3), slot(9)}; !slices.Equal(*woken, want) {
		t.Errorf("woken %v, want %v", *woken, want)
	}
}

func TestRolloutLimiterRelease(t *testing.T) {
	l, clock, woken := limiterForTest(1)
	l.Acquire(slot(0))
	l.Acquire(slot(1))
	l.Finish(slot(0), false)
	if active, _ := l.Counts(); active != 1 || len(*woken) != 0 {
		t.Errorf("a rollout still under way gave up its slot: %d active, woken %v", active, *woken)
	}
	// Never seen finishing: the slot is freed at the timeout.
	clock.t = clock.t.Add(time.Minute)
	l.Finish(slot(5), true)
	if want := []cache.ObjectName{slot(1)}; !slices.Equal(*woken, want) {
		t.Errorf("after the timeout woken %v, want %v", *woken, want)
	}
	l.Finish(slot(1), true)
	if active, pending := l.Counts(); active != 0 || pending != 0 {
		t.Errorf("counts = %d, %d after every rollout finished", active, pending)
	}
}

func TestRolloutLimiterUnlimitedAndNil(t *testing.T) {
	l, _, _ := limiterForTest(0)
	for i := range 100 {
		if !l.Acquire(slot(i)) {
			t.Fatalf("limit 0 refused rollout %d", i)
		}
	}
	var none *Limiter
	if !none.Acquire(slot(0)) {
		t.Error("a controller tracking no configuration must never hold a rollout back")
	}
	none.Finish(slot(0), true)
	if a, p := none.Counts(); a != 0 || p != 0 {
		t.Errorf("nil counts %d, %d", a, p)
	}
}
