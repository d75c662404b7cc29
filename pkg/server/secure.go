package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/kubernetes"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
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
	// certs, when not nil, keeps tls serving the files of
	// --metrics-cert-path as they change, until its context ends.
	certs func(context.Context)
}

// NewSecureMetrics returns nil when --metrics-secure is off or the metrics
// server is disabled.
func NewSecureMetrics(opts *options.Options, kube kubernetes.Interface) (*SecureMetrics, error) {
	if !opts.MetricsSecure || opts.MetricsAddr == "0" {
		return nil, nil
	}
	tlsConfig, certs, err := metricsTLSConfig(opts.MetricsCertPath, opts.MetricsCertName, opts.MetricsCertKey)
	if err != nil {
		return nil, err
	}
	// As k8s.io/apiserver's delegated authentication builds it, with
	// tokenReviewer in place of its webhook, so that a review that could not
	// be made is told apart from a token that is not valid. Errors are not
	// cached.
	authn := group.NewAuthenticatedGroupAdder(bearertoken.New(
		tokencache.New(tokenReviewer{kube.AuthenticationV1()}, false, tokenReviewCacheTTL, tokenReviewCacheTTL)))
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: kube.AuthorizationV1(),
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       &reviewRetry,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("building the metrics authorizer: %w", err)
	}
	return &SecureMetrics{authn: authn, authz: authz, tls: tlsConfig, certs: certs}, nil
}

// tokenReviewer checks a bearer token with a TokenReview, as
// k8s.io/apiserver's webhook token authenticator does (same timeout and
// retries), but a review that could not be made (the API server away, the
// review forbidden) is a *reviewError.
type tokenReviewer struct {
	client authenticationv1client.AuthenticationV1Interface
}

// reviewError: the token could not be checked, which says nothing about
// the token.
type reviewError struct{ err error }

func (e *reviewError) Error() string { return "reviewing the token: " + e.err.Error() }
func (e *reviewError) Unwrap() error { return e.err }

func (r tokenReviewer) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	var review *authenticationv1.TokenReview
	err := webhook.WithExponentialBackoff(ctx, reviewRetry, func() error {
		var err error
		review, err = r.client.TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		return err
	}, webhook.DefaultShouldRetry)
	if err != nil {
		return nil, false, &reviewError{err}
	}
	if !review.Status.Authenticated {
		return nil, false, nil
	}
	u := review.Status.User
	extra := make(map[string][]string, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = v
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}}, true, nil
}

// protect makes srv serve TLS and check every request, and keeps the
// certificate files loaded until ctx ends. A nil s leaves srv open.
func (s *SecureMetrics) protect(ctx context.Context, srv *http.Server) {
	if s == nil {
		return
	}
	srv.TLSConfig = s.tls
	srv.Handler = s.wrap(klog.FromContext(ctx), srv.Handler)
	if s.certs != nil {
		go s.certs(ctx)
	}
}

// wrap answers 401 without a valid token, 403 when the token's identity may
// not use the verb on the path, and otherwise passes the request to next.
// A review that could not be made fails closed with 500: the scraper's
// token may be fine, and a 401 would send its operator looking at it.
func (a *SecureMetrics) wrap(logger klog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok, err := a.authn.AuthenticateRequest(r)
		var failed *reviewError
		if errors.As(err, &failed) {
			logger.Error(err, "Authenticating a metrics request", "path", r.URL.Path)
			http.Error(w, "authentication failed", http.StatusInternalServerError)
			return
		}
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
// certDir, kept current by k8s.io/apiserver's dynamic certificates (file
// events, and a check every minute; a pair that fails to load leaves the
// previous pair in use) while the returned function runs, or, with no
// certDir, a self-signed certificate generated now. HTTP/2 is not offered:
// the metrics server needs none, and HTTP/2 has brought denial-of-service
// flaws (rapid reset) that HTTP/1.1 does not have.
func metricsTLSConfig(certDir, certName, keyName string) (*tls.Config, func(context.Context), error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if certDir == "" {
		certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(children.ControllerName, []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
		if err != nil {
			return nil, nil, fmt.Errorf("generating a self-signed metrics certificate: %w", err)
		}
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, nil, fmt.Errorf("loading the self-signed metrics certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
		return cfg, nil, nil
	}
	certFile, keyFile := filepath.Join(certDir, certName), filepath.Join(certDir, keyName)
	files, err := dynamiccertificates.NewDynamicServingContentFromFiles("metrics", certFile, keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the metrics certificate %s and key %s: %w", certFile, keyFile, err)
	}
	serving := dynamiccertificates.NewDynamicServingCertificateController(cfg, nil, files, nil, nil)
	files.AddListener(serving)
	if err := serving.RunOnce(); err != nil {
		return nil, nil, fmt.Errorf("serving the metrics certificate %s: %w", certFile, err)
	}
	served := &tls.Config{GetConfigForClient: serving.GetConfigForClient}
	return served, func(ctx context.Context) {
		go files.Run(ctx, 1)
		serving.Run(1, ctx.Done())
	}, nil
}
