package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"deployobject.dev/controller/pkg/options"
)

// reviewAPI is an API server that answers TokenReviews and
// SubjectAccessReviews over HTTP, as the controller's client meets them
// (status codes, Status bodies, retries), counting them and keeping the
// last access review's spec.
type reviewAPI struct {
	tokenReviews, accessReviews atomic.Int32

	mu         sync.Mutex
	lastAccess authorizationv1.SubjectAccessReviewSpec
}

// The tokens reviewServer knows: "unreviewable" is refused (403), as when
// the controller may not create TokenReviews; "flaky" fails once with 500
// and is then valid; any other token not listed is not valid.
var reviewIdentities = map[string]authenticationv1.UserInfo{
	"reader-token":    {Username: "reader"},
	"other-token":     {Username: "other"},
	"denied-token":    {Username: "denied"},
	"confused-token":  {Username: "confused"},
	"flaky":           {Username: "reader"},
	"anonymous-token": {Username: anonymousUser},
	"grouped-token": {Username: "grouped", UID: "uid-1", Groups: []string{"team"},
		Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"scraper-0"}}},
}

// reviewServer allows `get /metrics` to the user "reader" and the group
// "team"; it explicitly denies anything to "denied", and answers "confused"
// with both allowed and denied. Others get no opinion.
func reviewServer(t *testing.T) (kubernetes.Interface, *reviewAPI) {
	t.Helper()
	api := &reviewAPI{}
	var flaked atomic.Bool
	mux := http.NewServeMux()
	mux.Handle("POST /apis/authentication.k8s.io/v1/tokenreviews", reviewHandler(&api.tokenReviews, func(tr *authenticationv1.TokenReview) int {
		switch {
		case tr.Spec.Token == "unreviewable":
			return http.StatusForbidden
		case tr.Spec.Token == "flaky" && !flaked.Swap(true):
			return http.StatusInternalServerError
		}
		if u, ok := reviewIdentities[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u}
		} else {
			tr.Status.Error = "invalid bearer token"
		}
		return http.StatusCreated
	}))
	mux.Handle("POST /apis/authorization.k8s.io/v1/subjectaccessreviews", reviewHandler(&api.accessReviews, func(sar *authorizationv1.SubjectAccessReview) int {
		api.mu.Lock()
		api.lastAccess = sar.Spec
		api.mu.Unlock()
		nr := sar.Spec.NonResourceAttributes
		granted := (sar.Spec.User == "reader" || slices.Contains(sar.Spec.Groups, "team")) && nr != nil && nr.Verb == "get" && nr.Path == "/metrics"
		switch sar.Spec.User {
		case "denied":
			sar.Status = authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "denied by policy"}
		case "confused":
			sar.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Denied: true}
		default:
			sar.Status.Allowed = granted
		}
		return http.StatusCreated
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return kube, api
}

// reviewHandler counts a review request, fills in its status with answer
// and sends it back with the code answer returns; an error code is sent
// with a Status, as the API server sends it.
func reviewHandler[T any](count *atomic.Int32, answer func(*T) int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		var review T
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		code := answer(&review)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code >= 300 {
			reason := metav1.StatusReasonForbidden
			if code == http.StatusInternalServerError {
				reason = metav1.StatusReasonInternalError
			}
			_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: "review refused"})
			return
		}
		_ = json.NewEncoder(w).Encode(&review)
	})
}

// guarded is the handler NewSecureMetrics puts in front of a handler that
// answers "metrics", and records the Authorization header it was passed.
func guarded(t *testing.T, kube kubernetes.Interface) (func(method, path, authorization string) int, *atomic.Value) {
	t.Helper()
	s, err := NewSecureMetrics(&options.Options{MetricsSecure: true, MetricsAddr: ":0"}, kube)
	if err != nil {
		t.Fatal(err)
	}
	var passed atomic.Value
	h := s.wrap(klog.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed.Store(r.Header.Get("Authorization"))
		_, _ = w.Write([]byte("metrics"))
	}))
	return func(method, path, authorization string) int {
		r := httptest.NewRequest(method, path, nil)
		if authorization != "" {
			r.Header.Set("Authorization", authorization)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}, &passed
}

func TestSecureMetricsAuthenticatesAndAuthorizes(t *testing.T) {
	kube, api := reviewServer(t)
	do, passed := guarded(t, kube)
	for _, tc := range []struct {
		name, method, path, authorization string
		want                              int
	}{
		{"no token", http.MethodGet, "/metrics", "", http.StatusUnauthorized},
		{"unknown token", http.MethodGet, "/metrics", "Bearer forged", http.StatusUnauthorized},
		{"basic authentication", http.MethodGet, "/metrics", "Basic cmVhZGVyOnB3", http.StatusUnauthorized},
		{"the scheme alone", http.MethodGet, "/metrics", "Bearer", http.StatusUnauthorized},
		{"a space before the token", http.MethodGet, "/metrics", "Bearer  reader-token", http.StatusUnauthorized},
		{"the token without a scheme", http.MethodGet, "/metrics", "reader-token", http.StatusUnauthorized},
		{"a token the API server would not review", http.MethodGet, "/metrics", "Bearer unreviewable", http.StatusInternalServerError},
		{"identity without the grant", http.MethodGet, "/metrics", "Bearer other-token", http.StatusForbidden},
		{"identity explicitly denied", http.MethodGet, "/metrics", "Bearer denied-token", http.StatusForbidden},
		{"allowed and denied at once", http.MethodGet, "/metrics", "Bearer confused-token", http.StatusInternalServerError},
		{"anonymous", http.MethodGet, "/metrics", "Bearer anonymous-token", http.StatusForbidden},
		{"granted identity", http.MethodGet, "/metrics", "Bearer reader-token", http.StatusOK},
		{"granted identity, the scheme in lower case", http.MethodGet, "/metrics", "bearer reader-token", http.StatusOK},
		{"granted identity, text after the token", http.MethodGet, "/metrics", "Bearer reader-token trailing", http.StatusOK},
		{"granted through a group", http.MethodGet, "/metrics", "Bearer grouped-token", http.StatusOK},
		{"granted after the review was retried", http.MethodGet, "/metrics", "Bearer flaky", http.StatusOK},
		{"granted identity, a path not granted", http.MethodGet, "/debug/pprof/heap", "Bearer reader-token", http.StatusForbidden},
		{"granted identity, a path below the one granted", http.MethodGet, "/metrics/extra", "Bearer reader-token", http.StatusForbidden},
		{"granted identity, a verb not granted", http.MethodPost, "/metrics", "Bearer reader-token", http.StatusForbidden},
	} {
		passed.Store("")
		if got := do(tc.method, tc.path, tc.authorization); got != tc.want {
			t.Errorf("%s: %s %s = %d, want %d", tc.name, tc.method, tc.path, got, tc.want)
		}
		if p := passed.Load(); p != "" {
			t.Errorf("%s: the handler was passed the Authorization header %q", tc.name, p)
		}
	}
	tr, ar := api.tokenReviews.Load(), api.accessReviews.Load()
	for range 5 {
		if got := do(http.MethodGet, "/metrics", "Bearer reader-token"); got != http.StatusOK {
			t.Fatalf("repeated scrape = %d, want 200", got)
		}
	}
	if api.tokenReviews.Load() != tr || api.accessReviews.Load() != ar {
		t.Errorf("5 more scrapes made %d TokenReviews and %d SubjectAccessReviews; want 0: answers are cached", api.tokenReviews.Load()-tr, api.accessReviews.Load()-ar)
	}
}

// TestSecureMetricsAsksForTheWholeIdentity: the SubjectAccessReview carries
// what the TokenReview said, plus system:authenticated, as k8s.io/apiserver
// sends it, so that grants to a group or by extra work.
func TestSecureMetricsAsksForTheWholeIdentity(t *testing.T) {
	kube, api := reviewServer(t)
	do, _ := guarded(t, kube)
	if got := do(http.MethodGet, "/metrics", "Bearer grouped-token"); got != http.StatusOK {
		t.Fatalf("GET /metrics = %d, want 200", got)
	}
	want := authorizationv1.SubjectAccessReviewSpec{
		User:                  "grouped",
		UID:                   "uid-1",
		Groups:                []string{"team", authenticatedGroup},
		Extra:                 map[string]authorizationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"scraper-0"}},
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if !reflect.DeepEqual(api.lastAccess, want) {
		t.Errorf("SubjectAccessReview spec\n%+v\nwant\n%+v", api.lastAccess, want)
	}
}

func TestSecureMetricsOff(t *testing.T) {
	for _, opts := range []options.Options{{MetricsSecure: false, MetricsAddr: ":8080"}, {MetricsSecure: true, MetricsAddr: "0"}} {
		s, err := NewSecureMetrics(&opts, fake.NewClientset())
		if err != nil || s != nil {
			t.Errorf("newSecureMetrics(secure %v, address %q) = %v, %v; want nil, nil", opts.MetricsSecure, opts.MetricsAddr, s, err)
		}
		srv := &http.Server{Handler: http.NotFoundHandler()}
		s.protect(context.Background(), srv)
		if srv.TLSConfig != nil {
			t.Error("a nil SecureMetrics set a TLS configuration")
		}
	}
}
