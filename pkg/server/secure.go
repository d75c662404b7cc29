package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"deployobject.dev/controller/pkg/options"
)

// SecureMetrics guards the metrics server the way Kubernetes components
// guard theirs: TLS, so that bearer tokens never travel in clear text; the
// token checked with a TokenReview; and the request with a
// SubjectAccessReview for its verb and non-resource URL, for example `get`
// on /metrics. Both answers are cached (reviews.go). It calls the two APIs
// with client-go rather than through k8s.io/apiserver's delegating
// authenticator and authorizer, which would link the API server's CEL,
// tracing and gRPC packages and double the binary (docs/development.md).
type SecureMetrics struct {
	tokens *tokenReviews
	access *accessReviews
	cert   *servingCert
}

// NewSecureMetrics returns nil when --metrics-secure is off or the metrics
// server is disabled.
func NewSecureMetrics(opts *options.Options, kube kubernetes.Interface) (*SecureMetrics, error) {
	if !opts.MetricsSecure || opts.MetricsAddr == "0" {
		return nil, nil
	}
	cert, err := newServingCert(opts.MetricsCertPath, opts.MetricsCertName, opts.MetricsCertKey)
	if err != nil {
		return nil, err
	}
	tokens, err := newTokenReviews(kube.AuthenticationV1().TokenReviews(), reviewCacheEntries, clock.RealClock{})
	if err != nil {
		return nil, err
	}
	return &SecureMetrics{tokens: tokens, access: newAccessReviews(kube.AuthorizationV1().SubjectAccessReviews(), reviewCacheEntries, clock.RealClock{}), cert: cert}, nil
}

// protect makes srv serve TLS and check every request. A nil s leaves srv
// open.
func (s *SecureMetrics) protect(ctx context.Context, srv *http.Server) {
	if s == nil {
		return
	}
	logger := klog.FromContext(ctx)
	srv.TLSConfig = s.cert.tlsConfig(logger)
	srv.Handler = s.wrap(logger, srv.Handler)
}

// wrap answers 401 without a valid token, 403 when the token's identity may
// not use the verb on the path, and otherwise passes the request to next,
// without the token. A review that could not be made fails closed with
// 500: the scraper's token may be fine, and a 401 would send its operator
// looking at it.
func (s *SecureMetrics) wrap(logger klog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearerToken(r.Header)
		if token == "" {
			logger.V(4).Info("Metrics request not authenticated", "path", r.URL.Path, "reason", "no bearer token")
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		user, err := s.tokens.authenticate(r.Context(), token)
		if err != nil {
			logger.Error(err, "Authenticating a metrics request", "path", r.URL.Path)
			http.Error(w, "authentication failed", http.StatusInternalServerError)
			return
		}
		if user == nil {
			logger.V(4).Info("Metrics request not authenticated", "path", r.URL.Path, "reason", "token not valid")
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		// As k8s.io/apiserver does, so that no handler can pass the
		// token on.
		r.Header.Del("Authorization")
		verb := strings.ToLower(r.Method)
		allowed, reason, err := s.access.authorize(r.Context(), user, verb, r.URL.Path)
		if err != nil {
			logger.Error(err, "Authorizing a metrics request", "user", user.Username, "path", r.URL.Path)
			http.Error(w, "authorization failed", http.StatusInternalServerError)
			return
		}
		if !allowed {
			logger.V(4).Info("Metrics request forbidden", "user", user.Username, "path", r.URL.Path, "reason", reason)
			http.Error(w, fmt.Sprintf("Forbidden: user %q may not %s %s", user.Username, verb, r.URL.Path), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearerToken reads the Authorization header as k8s.io/apiserver does:
// "Bearer" in any case, a space, and the token up to the next space.
// Anything else is no token.
func bearerToken(h http.Header) string {
	parts := strings.SplitN(strings.TrimSpace(h.Get("Authorization")), " ", 3)
	if len(parts) < 2 || strings.ToLower(parts[0]) != "bearer" {
		return ""
	}
	return parts[1]
}
