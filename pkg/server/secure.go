package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/options"
)

// How long the API server's answers are reused. A scrape every 15 to 60 s
// then costs no API request most of the time, while a revoked token stops
// working within a minute and a removed grant within five. A denial is
// cached briefly, so a newly granted scraper gets in soon.
const (
	tokenReviewCacheTTL = time.Minute
	allowCacheTTL       = 5 * time.Minute
	denyCacheTTL        = 30 * time.Second
	reviewTimeout       = 10 * time.Second
)

// reviewRetry is the backoff of k8s.io/apiserver's delegated authentication
// and authorization options (DefaultAuthWebhookRetryBackoff).
var reviewRetry = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// SecureMetrics guards the metrics server the way Kubernetes components
// guard theirs: TLS, so that bearer tokens never travel in clear text; the
// token checked with a TokenReview; and the request with a
// SubjectAccessReview for its verb and non-resource URL, for example `get`
// on /metrics. Both answers are cached.
type SecureMetrics struct {
	authn authenticator.Request
	authz authorizer.Authorizer
	tls   *tls.Config
}

// NewSecureMetrics returns nil when --metrics-secure is off or the metrics
// server is disabled.
func NewSecureMetrics(opts *options.Options, kube kubernetes.Interface) (*SecureMetrics, error) {
	if !opts.MetricsSecure || opts.MetricsAddr == "0" {
		return nil, nil
	}
	tlsConfig, err := metricsTLSConfig(opts.MetricsCertPath, opts.MetricsCertName, opts.MetricsCertKey)
	if err != nil {
		return nil, err
	}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		TokenAccessReviewClient:  kube.AuthenticationV1(),
		TokenAccessReviewTimeout: reviewTimeout,
		WebhookRetryBackoff:      &reviewRetry,
		CacheTTL:                 tokenReviewCacheTTL,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("building the metrics authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: kube.AuthorizationV1(),
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       &reviewRetry,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("building the metrics authorizer: %w", err)
	}
	return &SecureMetrics{authn: authn, authz: authz, tls: tlsConfig}, nil
}

// protect makes srv serve TLS and check every request. A nil s leaves srv
// open.
func (s *SecureMetrics) protect(logger klog.Logger, srv *http.Server) {
	if s == nil {
		return
	}
	srv.TLSConfig = s.tls
	srv.Handler = s.wrap(logger, srv.Handler)
}

// wrap answers 401 without a valid token, 403 when the token's identity may
// not use the verb on the path, and otherwise passes the request to next.
// An error of the API server fails closed, as in Kubernetes components.
func (a *SecureMetrics) wrap(logger klog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok, err := a.authn.AuthenticateRequest(r)
		if err != nil || !ok {
			logger.V(4).Info("Metrics request not authenticated", "path", r.URL.Path, "err", err)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		attrs := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
		decision, reason, err := a.authz.Authorize(r.Context(), attrs)
		if err != nil {
			logger.Error(err, "Authorizing a metrics request", "user", res.User.GetName(), "path", r.URL.Path)
			http.Error(w, "authorization failed", http.StatusInternalServerError)
			return
		}
		if decision != authorizer.DecisionAllow {
			logger.V(4).Info("Metrics request forbidden", "user", res.User.GetName(), "path", r.URL.Path, "reason", reason)
			http.Error(w, fmt.Sprintf("Forbidden: user %q may not %s %s", res.User.GetName(), attrs.Verb, r.URL.Path), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// metricsTLSConfig serves the certificate and key certName and keyName in
// certDir, re-read whenever they change (cert-manager and Secret volumes
// rotate them in place), or, with no certDir, a self-signed certificate
// generated now. HTTP/2 is not offered: the metrics server needs none, and
// HTTP/2 has brought denial-of-service flaws (rapid reset) that HTTP/1.1
// does not have.
func metricsTLSConfig(certDir, certName, keyName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if certDir == "" {
		certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(children.ControllerName, []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
		if err != nil {
			return nil, fmt.Errorf("generating a self-signed metrics certificate: %w", err)
		}
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("loading the self-signed metrics certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
		return cfg, nil
	}
	files := &certFiles{cert: filepath.Join(certDir, certName), key: filepath.Join(certDir, keyName)}
	if _, err := files.get(nil); err != nil {
		return nil, err
	}
	cfg.GetCertificate = files.get
	return cfg, nil
}

// certFiles is a certificate and key on disk, loaded again when either
// file's modification time changes. A pair that fails to load (one file
// rotated, the other not yet) leaves the previous pair in use.
type certFiles struct {
	cert, key string

	mu                sync.Mutex
	loaded            *tls.Certificate
	certMod, keyMod   time.Time
	certSize, keySize int64
}

func (f *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ci, cerr := os.Stat(f.cert)
	ki, kerr := os.Stat(f.key)
	if f.loaded != nil && cerr == nil && kerr == nil &&
		ci.ModTime().Equal(f.certMod) && ki.ModTime().Equal(f.keyMod) && ci.Size() == f.certSize && ki.Size() == f.keySize {
		return f.loaded, nil
	}
	c, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err == nil {
		err = errors.Join(cerr, kerr)
	}
	if err != nil {
		if f.loaded != nil {
			return f.loaded, nil
		}
		return nil, fmt.Errorf("loading the metrics certificate %s and key %s: %w", f.cert, f.key, err)
	}
	f.loaded = &c
	f.certMod, f.keyMod, f.certSize, f.keySize = ci.ModTime(), ki.ModTime(), ci.Size(), ki.Size()
	return f.loaded, nil
}
