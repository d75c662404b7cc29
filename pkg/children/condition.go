package children

import (
	"unicode/utf8"
)

// reasonOr is reason, or fallback when another controller left it empty: a
// condition the controller writes must have one.
func reasonOr(reason, fallback string) string {
	if reason == "" {
		return fallback
	}
	return reason
}

// MaxConditionMessage bounds the messages the controller writes, far below
// the 32768 characters the Condition schema allows: an error can quote
// rejected values at length, and a message over the limit would make the
// status write itself invalid.
const MaxConditionMessage = 4096

// MaxEventNote is the most the events.k8s.io/v1 API accepts in an Event's
// note: a longer one is refused, and the event lost.
const MaxEventNote = 1024

// BoundMessage cuts s to at most MaxConditionMessage bytes, on a character
// boundary, marking the cut.
func BoundMessage(s string) string {
	return bound(s, MaxConditionMessage)
}

// BoundNote cuts s to at most MaxEventNote bytes, on a character boundary,
// marking the cut.
func BoundNote(s string) string {
	return bound(s, MaxEventNote)
}

func bound(s string, limit int) string {
	const mark = " [truncated]"
	if len(s) <= limit {
		return s
	}
	s = s[:limit-len(mark)]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + mark
}

// FindCondition is the condition of conds whose type, as typeOf reads it,
// is t; nil when there is none. The children's condition types differ only
// in the type of their Type field; metav1.Conditions have
// meta.FindStatusCondition.
func FindCondition[C any, T comparable](conds []C, t T, typeOf func(*C) T) *C {
	for i := range conds {
		if typeOf(&conds[i]) == t {
			return &conds[i]
		}
	}
	return nil
}
