package server

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

	"deployobject.dev/controller/pkg/options"
)

// reviewServer is an API server that answers TokenReviews for the tokens
// "reader-token" and "other-token", and allows SubjectAccessReviews for
// `get /metrics` by the user "reader" only, counting the reviews. A fake
// clientset would not do: k8s.io/apiserver's review clients use the REST
// client directly, for the HTTP status.
func reviewServer(t *testing.T) (kubernetes.Interface, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	var tokenReviews, accessReviews atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("POST /apis/authentication.k8s.io/v1/tokenreviews", reviewHandler(&tokenReviews, func(tr *authenticationv1.TokenReview) {
		if user, ok := map[string]string{"reader-token": "reader", "other-token": "other"}[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: user}}
		}
	}))
	mux.Handle("POST /apis/authorization.k8s.io/v1/subjectaccessreviews", reviewHandler(&accessReviews, func(sar *authorizationv1.SubjectAccessReview) {
		nr := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = sar.Spec.User == "reader" && nr != nil && nr.Verb == "get" && nr.Path == "/metrics"
	}))
	api := httptest.NewServer(mux)
	t.Cleanup(api.Close)
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	return kube, &tokenReviews, &accessReviews
}

// reviewHandler counts a review request, fills in its status with answer and
// sends it back.
func reviewHandler[T any](count *atomic.Int32, answer func(*T)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		var review T
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer(&review)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	})
}

func TestSecureMetricsAuthenticatesAndAuthorizes(t *testing.T) {
	kube, tokenReviews, accessReviews := reviewServer(t)
	s, err := NewSecureMetrics(&options.Options{MetricsSecure: true, MetricsAddr: ":0"}, kube)
	if err != nil {
		t.Fatal(err)
	}
	h := s.wrap(klog.Background(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	get := func(path, token string) int {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"no token", "/metrics", "", http.StatusUnauthorized},
		{"unknown token", "/metrics", "forged", http.StatusUnauthorized},
		{"identity without the grant", "/metrics", "other-token", http.StatusForbidden},
		{"granted identity", "/metrics", "reader-token", http.StatusOK},
		{"granted identity, a path not granted", "/debug/pprof/heap", "reader-token", http.StatusForbidden},
	} {
		if got := get(tc.path, tc.token); got != tc.want {
			t.Errorf("%s: GET %s = %d, want %d", tc.name, tc.path, got, tc.want)
		}
	}
	tr, ar := tokenReviews.Load(), accessReviews.Load()
	for range 5 {
		if got := get("/metrics", "reader-token"); got != http.StatusOK {
			t.Fatalf("repeated scrape = %d, want 200", got)
		}
	}
	if tokenReviews.Load() != tr || accessReviews.Load() != ar {
		t.Errorf("5 more scrapes made %d TokenReviews and %d SubjectAccessReviews; want 0: answers are cached", tokenReviews.Load()-tr, accessReviews.Load()-ar)
	}
}

func TestSecureMetricsOff(t *testing.T) {
	for _, opts := range []options.Options{{MetricsSecure: false, MetricsAddr: ":8080"}, {MetricsSecure: true, MetricsAddr: "0"}} {
		s, err := NewSecureMetrics(&opts, fake.NewClientset())
		if err != nil || s != nil {
			t.Errorf("newSecureMetrics(secure %v, address %q) = %v, %v; want nil, nil", opts.MetricsSecure, opts.MetricsAddr, s, err)
		}
		srv := &http.Server{Handler: http.NotFoundHandler()}
		s.protect(klog.Background(), srv)
		if srv.TLSConfig != nil {
			t.Error("a nil SecureMetrics set a TLS configuration")
		}
	}
}

func TestMetricsServesTLSWithSelfSignedCertificate(t *testing.T) {
	cfg, err := metricsTLSConfig("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	ts.TLS = cfg
	ts.StartTLS()
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.ProtoMajor != 1 {
		t.Errorf("GET over TLS: %d, TLS %v, protocol %s; want 200 over TLS with HTTP/1.1", resp.StatusCode, resp.TLS != nil, resp.Proto)
	}
}

func TestMetricsCertificateFilesAreReloaded(t *testing.T) {
	dir := t.TempDir()
	write := func(host string, mod time.Time) {
		t.Helper()
		c, k, err := cert.GenerateSelfSignedCertKey(host, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"tls.crt": c, "tls.key": k} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mod, mod); err != nil {
				t.Fatal(err)
			}
		}
	}
	served := func(cfg *tls.Config) string {
		t.Helper()
		c, err := cfg.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		name, _, _ := strings.Cut(c.Leaf.Subject.CommonName, "@")
		return name
	}
	if _, err := metricsTLSConfig(dir, "tls.crt", "tls.key"); err == nil {
		t.Error("metricsTLSConfig with no files in the directory succeeded")
	}
	now := time.Now()
	write("first", now.Add(-time.Hour))
	cfg, err := metricsTLSConfig(dir, "tls.crt", "tls.key")
	if err != nil {
		t.Fatal(err)
	}
	if got := served(cfg); got != "first" {
		t.Fatalf("serving %q, want first", got)
	}
	write("second", now)
	if got := served(cfg); got != "second" {
		t.Errorf("after rotation serving %q, want second", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := served(cfg); got != "second" {
		t.Errorf("with a broken key file serving %q, want the previous pair (second)", got)
	}
}
