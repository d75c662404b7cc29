package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// fastRetry keeps reviewRetry's number of attempts without its waits.
var fastRetry = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: reviewRetry.Steps}

// fakeTokenReviews answers TokenReviews through a fake clientset: a token
// "user:NAME" is NAME's, "fail" fails with 500, anything else is not
// valid. It returns the reviewer and the tokens reviewed, in order.
func fakeTokenReviews(t *testing.T, entries int, clock *clocktesting.FakeClock) (*tokenReviews, *[]string) {
	t.Helper()
	kube := fake.NewClientset()
	var reviewed []string
	kube.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview).DeepCopy()
		reviewed = append(reviewed, tr.Spec.Token)
		if tr.Spec.Token == "fail" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd away"))
		}
		if name, ok := strings.CutPrefix(tr.Spec.Token, "user:"); ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: name}}
		}
		return true, tr, nil
	})
	r, err := newTokenReviews(kube.AuthenticationV1().TokenReviews(), entries, clock)
	if err != nil {
		t.Fatal(err)
	}
	r.retry = fastRetry
	return r, &reviewed
}

// TestTokenReviewCache: answers, valid or not, are reused for
// tokenReviewCacheTTL and then asked again; failures are not reused; the
// least recently used token makes room.
func TestTokenReviewCache(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// tokens are authenticated in order; "+D" steps the clock by D.
		tokens []string
		// wantReviewed are the tokens sent to the API server, in order.
		wantReviewed []string
	}{
		{"a valid token, reused", []string{"user:a", "user:a", "+59s", "user:a"}, []string{"user:a"}},
		{"a valid token, expired", []string{"user:a", "+61s", "user:a"}, []string{"user:a", "user:a"}},
		{"a token not valid, reused", []string{"forged", "forged", "+59s", "forged"}, []string{"forged"}},
		{"a token not valid, expired", []string{"forged", "+61s", "forged"}, []string{"forged", "forged"}},
		{"a failed review is not reused", []string{"fail", "fail"}, slices.Repeat([]string{"fail"}, 2*fastRetry.Steps)},
		{"distinct tokens are distinct entries", []string{"user:a", "user:b", "user:a", "user:b"}, []string{"user:a", "user:b"}},
		{"the cache holds 3: the oldest of 4 makes room", []string{"user:a", "user:b", "user:c", "user:d", "user:d", "user:c", "user:b", "user:a"}, []string{"user:a", "user:b", "user:c", "user:d", "user:a"}},
		{"a token used again is the newest", []string{"user:a", "user:b", "user:c", "user:a", "user:d", "user:a", "user:b"}, []string{"user:a", "user:b", "user:c", "user:d", "user:b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(time.Now())
			r, reviewed := fakeTokenReviews(t, 3, clock)
			for _, token := range tc.tokens {
				if d, ok := strings.CutPrefix(token, "+"); ok {
					step, err := time.ParseDuration(d)
					if err != nil {
						t.Fatal(err)
					}
					clock.Step(step)
					continue
				}
				user, err := r.authenticate(ctx, token)
				name, valid := strings.CutPrefix(token, "user:")
				switch {
				case token == "fail":
					if err == nil {
						t.Errorf("%s: no error from a failed review", token)
					}
				case err != nil:
					t.Errorf("%s: %v", token, err)
				case valid && (user == nil || user.Username != name):
					t.Errorf("%s: identity %v, want %s", token, user, name)
				case !valid && user != nil:
					t.Errorf("%s: identity %v, want none", token, user)
				}
			}
			if !slices.Equal(*reviewed, tc.wantReviewed) {
				t.Errorf("reviewed %q, want %q", *reviewed, tc.wantReviewed)
			}
			if n := len(r.identities.Keys()); n > 3 {
				t.Errorf("%d tokens cached, more than the bound of 3", n)
			}
		})
	}
}

// TestTokenCacheKeepsNoToken: the cache is keyed by a keyed hash, which
// differs between processes, and holds nothing of the token.
func TestTokenCacheKeepsNoToken(t *testing.T) {
	const token = "user:scraper-with-a-long-secret-token"
	clock := clocktesting.NewFakeClock(time.Now())
	first, _ := fakeTokenReviews(t, 8, clock)
	second, _ := fakeTokenReviews(t, 8, clock)
	if _, err := first.authenticate(context.Background(), token); err != nil {
		t.Fatal(err)
	}
	keys := first.identities.Keys()
	if len(keys) != 1 {
		t.Fatalf("%d keys cached, want 1", len(keys))
	}
	key, ok := keys[0].([32]byte)
	if !ok {
		t.Fatalf("the cache key is a %T, want a [32]byte hash", keys[0])
	}
	if key != first.cacheKey(token) || key == second.cacheKey(token) {
		t.Error("the key does not depend on the process's HMAC key alone")
	}
	if strings.Contains(string(key[:]), "scraper") || strings.Contains(fmt.Sprint(keys), "scraper") {
		t.Error("the cache key holds the token")
	}
}

func TestWithAuthenticatedGroup(t *testing.T) {
	for _, tc := range []struct {
		name         string
		user         string
		groups, want []string
	}{
		{"no groups", "alice", nil, []string{authenticatedGroup}},
		{"other groups", "alice", []string{"team"}, []string{"team", authenticatedGroup}},
		{"already authenticated", "alice", []string{authenticatedGroup, "team"}, []string{authenticatedGroup, "team"}},
		{"unauthenticated", "alice", []string{unauthenticatedGroup}, []string{unauthenticatedGroup}},
		{"anonymous", anonymousUser, []string{"team"}, []string{"team"}},
	} {
		groups := slices.Clone(tc.groups)
		got := withAuthenticatedGroup(authenticationv1.UserInfo{Username: tc.user, Groups: groups})
		if !slices.Equal(got.Groups, tc.want) {
			t.Errorf("%s: groups %q, want %q", tc.name, got.Groups, tc.want)
		}
		if !slices.Equal(groups, tc.groups) {
			t.Errorf("%s: the review's groups became %q", tc.name, groups)
		}
	}
}

// fakeAccessReviews answers SubjectAccessReviews through a fake clientset:
// "reader" may get /metrics, "fail" fails with 500, others are denied. It
// returns the reviewer and the reviews made, as "user verb path".
func fakeAccessReviews(t *testing.T, entries int, clock *clocktesting.FakeClock) (*accessReviews, *[]string) {
	t.Helper()
	kube := fake.NewClientset()
	var reviewed []string
	kube.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		nr := sar.Spec.NonResourceAttributes
		reviewed = append(reviewed, sar.Spec.User+" "+nr.Verb+" "+nr.Path)
		if sar.Spec.User == "fail" {
			return true, nil, apierrors.NewInternalError(errors.New("etcd away"))
		}
		sar.Status.Allowed = sar.Spec.User == "reader" && nr.Verb == "get" && nr.Path == "/metrics"
		return true, sar, nil
	})
	a := newAccessReviews(kube.AuthorizationV1().SubjectAccessReviews(), entries, clock)
	a.retry = fastRetry
	return a, &reviewed
}

// TestAccessReviewCache: an allowed request is reused for allowCacheTTL, a
// denied one for denyCacheTTL; every part of the request is part of the
// key; failures are not reused; the least recently used makes room.
func TestAccessReviewCache(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// requests are "user verb path", authorized in order; "+D"
		// steps the clock by D.
		requests     []string
		wantReviewed []string
	}{
		{"allowed, reused", []string{"reader get /metrics", "+299s", "reader get /metrics"}, []string{"reader get /metrics"}},
		{"allowed, expired", []string{"reader get /metrics", "+301s", "reader get /metrics"}, []string{"reader get /metrics", "reader get /metrics"}},
		{"denied, reused", []string{"other get /metrics", "+29s", "other get /metrics"}, []string{"other get /metrics"}},
		{"denied, expired", []string{"other get /metrics", "+31s", "other get /metrics"}, []string{"other get /metrics", "other get /metrics"}},
		{"another path is asked", []string{"reader get /metrics", "reader get /debug/pprof/heap"}, []string{"reader get /metrics", "reader get /debug/pprof/heap"}},
		{"another verb is asked", []string{"reader get /metrics", "reader post /metrics"}, []string{"reader get /metrics", "reader post /metrics"}},
		{"another user is asked", []string{"reader get /metrics", "other get /metrics"}, []string{"reader get /metrics", "other get /metrics"}},
		{"a failed review is not reused", []string{"fail get /metrics", "fail get /metrics"}, slices.Repeat([]string{"fail get /metrics"}, 2*fastRetry.Steps)},
		{"the cache holds 2: the oldest of 3 makes room", []string{"reader get /a", "reader get /b", "reader get /c", "reader get /c", "reader get /b", "reader get /a"}, []string{"reader get /a", "reader get /b", "reader get /c", "reader get /a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(time.Now())
			a, reviewed := fakeAccessReviews(t, 2, clock)
			for _, req := range tc.requests {
				if d, ok := strings.CutPrefix(req, "+"); ok {
					step, err := time.ParseDuration(d)
					if err != nil {
						t.Fatal(err)
					}
					clock.Step(step)
					continue
				}
				f := strings.Fields(req)
				allowed, _, err := a.authorize(ctx, &authenticationv1.UserInfo{Username: f[0]}, f[1], f[2])
				switch want := req == "reader get /metrics"; {
				case f[0] == "fail":
					if err == nil {
						t.Errorf("%s: no error from a failed review", req)
					}
				case err != nil:
					t.Errorf("%s: %v", req, err)
				case allowed != want:
					t.Errorf("%s: allowed %v, want %v", req, allowed, want)
				}
			}
			if !slices.Equal(*reviewed, tc.wantReviewed) {
				t.Errorf("reviewed %q, want %q", *reviewed, tc.wantReviewed)
			}
			if n := len(a.decisions.Keys()); n > 2 {
				t.Errorf("%d decisions cached, more than the bound of 2", n)
			}
		})
	}
}

// TestReviewRetries: what k8s.io/apiserver's webhooks retry is retried, up
// to reviewRetry's attempts; anything else fails at once.
func TestReviewRetries(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"an internal error", apierrors.NewInternalError(errors.New("etcd away")), fastRetry.Steps},
		{"a timeout", apierrors.NewTimeoutError("slow", 1), fastRetry.Steps},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), fastRetry.Steps},
		{"a server timeout asking to come back", apierrors.NewServerTimeout(schema.GroupResource{Resource: "tokenreviews"}, "create", 1), fastRetry.Steps},
		{"a connection reset", &wrapped{syscall.ECONNRESET}, fastRetry.Steps},
		{"an HTTP/2 connection lost", errors.New("http2: client connection lost"), fastRetry.Steps},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "tokenreviews"}, "", errors.New("no")), 1},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Resource: "tokenreviews"}, ""), 1},
		{"connection refused", &wrapped{syscall.ECONNREFUSED}, 1},
		{"bad request", apierrors.NewBadRequest("no"), 1},
	} {
		calls := 0
		err := withRetries(context.Background(), fastRetry, func(context.Context) error {
			calls++
			return tc.err
		})
		if calls != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s: %d attempts, error %v; want %d attempts and the review's error", tc.name, calls, err, tc.want)
		}
	}
	calls := 0
	err := withRetries(context.Background(), fastRetry, func(context.Context) error {
		if calls++; calls < 3 {
			return apierrors.NewInternalError(errors.New("etcd away"))
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("a review that succeeds on the third attempt: %d attempts, error %v; want 3 and none", calls, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := withRetries(ctx, fastRetry, func(context.Context) error { return nil }); err == nil {
		t.Error("a review with its context done succeeded")
	}
}

// wrapped is a net.OpError-like error around a syscall error, as a
// transport returns it.
type wrapped struct{ err error }

func (w *wrapped) Error() string { return "dial tcp: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
