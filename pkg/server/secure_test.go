package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

	"deployobject.dev/controller/pkg/options"
)

// reviewServer is an API server that answers TokenReviews for the tokens
// "reader-token" and "other-token", refuses (403) to review "unreviewable",
// and allows SubjectAccessReviews for
// `get /metrics` by the user "reader" only, counting the reviews. A fake
// clientset would not do: k8s.io/apiserver's review clients use the REST
// client directly, for the HTTP status.
func reviewServer(t *testing.T) (kubernetes.Interface, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	var tokenReviews, accessReviews atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("POST /apis/authentication.k8s.io/v1/tokenreviews", reviewHandler(&tokenReviews, func(tr *authenticationv1.TokenReview) int {
		if tr.Spec.Token == "unreviewable" {
			return http.StatusForbidden
		}
		if user, ok := map[string]string{"reader-token": "reader", "other-token": "other"}[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: user}}
		} else {
			tr.Status.Error = "invalid bearer token"
		}
		return http.StatusCreated
	}))
	mux.Handle("POST /apis/authorization.k8s.io/v1/subjectaccessreviews", reviewHandler(&accessReviews, func(sar *authorizationv1.SubjectAccessReview) int {
		nr := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = sar.Spec.User == "reader" && nr != nil && nr.Verb == "get" && nr.Path == "/metrics"
		return http.StatusCreated
	}))
	api := httptest.NewServer(mux)
	t.Cleanup(api.Close)
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return kube, &tokenReviews, &accessReviews
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
			_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(code), Reason: metav1.StatusReasonForbidden, Message: "tokenreviews.authentication.k8s.io is forbidden"})
			return
		}
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
		{"a token the API server would not review", "/metrics", "unreviewable", http.StatusInternalServerError},
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
		s.protect(context.Background(), srv)
		if srv.TLSConfig != nil {
			t.Error("a nil SecureMetrics set a TLS configuration")
		}
	}
}

func TestMetricsServesTLSWithSelfSignedCertificate(t *testing.T) {
	cfg, run, err := metricsTLSConfig("", "", "")
	if err != nil || run != nil {
		t.Fatalf("metricsTLSConfig without files: runner %v, err %v; want a static configuration", run != nil, err)
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

// TestMetricsCertificateFilesAreReloaded: a rotated pair is served without
// a restart; a broken pair leaves the previous one in use.
func TestMetricsCertificateFilesAreReloaded(t *testing.T) {
	dir := t.TempDir()
	write := func(host string) {
		t.Helper()
		c, k, err := cert.GenerateSelfSignedCertKey(host, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"tls.crt": c, "tls.key": k} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	served := func(cfg *tls.Config) string {
		t.Helper()
		c, err := cfg.GetConfigForClient(&tls.ClientHelloInfo{ServerName: "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificates[0].Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		name, _, _ := strings.Cut(leaf.Subject.CommonName, "@")
		return name
	}
	if _, _, err := metricsTLSConfig(dir, "tls.crt", "tls.key"); err == nil {
		t.Error("metricsTLSConfig with no files in the directory succeeded")
	}
	write("first")
	cfg, run, err := metricsTLSConfig(dir, "tls.crt", "tls.key")
	if err != nil {
		t.Fatal(err)
	}
	if got := served(cfg); got != "first" {
		t.Fatalf("serving %q, want first", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go run(ctx)
	waitServed := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for served(cfg) != want {
			if time.Now().After(deadline) {
				t.Fatalf("serving %q 10s after the files changed, want %q", served(cfg), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The file watch starts with the runner; a write before it would be
	// seen only by the check every minute.
	time.Sleep(200 * time.Millisecond)
	write("second")
	waitServed("second")
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if got := served(cfg); got != "second" {
		t.Errorf("with a broken key file serving %q, want the previous pair (second)", got)
	}
	write("third")
	waitServed("third")
}
