package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// How long the API server's answers are reused. A scrape every 15 to 60 s
// then costs no API request most of the time, while a revoked token stops
// working within a minute and a removed grant within five. A denial is
// cached briefly, so a newly granted scraper gets in soon. A token that is
// not valid is remembered as long as a valid one, so that a scraper sent
// with a wrong token costs one review a minute.
const (
	tokenReviewCacheTTL = time.Minute
	allowCacheTTL       = 5 * time.Minute
	denyCacheTTL        = 30 * time.Second
	reviewTimeout       = 10 * time.Second
)

// reviewCacheEntries bounds each cache: about 1 KiB an entry at most (an
// identity with its groups and extra, or a decision with its reason), so
// that requests with made-up tokens or paths cannot grow the process, where
// a few scrapers use a handful. The least recently used entry makes room.
const reviewCacheEntries = 1024

// reviewRetry is the backoff of k8s.io/apiserver's delegated authentication
// and authorization options (DefaultAuthWebhookRetryBackoff).
var reviewRetry = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// The names Kubernetes gives anonymous requests and every authenticated
// identity (k8s.io/apiserver's user package).
const (
	anonymousUser        = "system:anonymous"
	authenticatedGroup   = "system:authenticated"
	unauthenticatedGroup = "system:unauthenticated"
)

// tokenReviews authenticates bearer tokens with TokenReviews, as
// k8s.io/apiserver's delegated authentication does: no audiences (those of
// the API server), the answer, valid or not, cached for
// tokenReviewCacheTTL, a review that could not be made not cached. The
// cache is keyed by an HMAC of the token under a key drawn at start, as
// k8s.io/apiserver's token cache is, so that the process keeps no token
// and no hashes computed beforehand match its keys.
type tokenReviews struct {
	client authenticationv1client.TokenReviewInterface
	retry  wait.Backoff
	hmac   []byte
	// identities maps a token's HMAC to its *authenticationv1.UserInfo,
	// nil for a token that is not valid.
	identities *utilcache.LRUExpireCache
}

func newTokenReviews(client authenticationv1client.TokenReviewInterface, entries int, clock utilcache.Clock) (*tokenReviews, error) {
	key := make([]byte, sha256.Size)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("drawing the token cache's key: %w", err)
	}
	return &tokenReviews{client: client, retry: reviewRetry, hmac: key, identities: utilcache.NewLRUExpireCacheWithClock(entries, clock)}, nil
}

// cacheKey is the HMAC-SHA256 of token.
func (t *tokenReviews) cacheKey(token string) [sha256.Size]byte {
	h := hmac.New(sha256.New, t.hmac)
	h.Write([]byte(token))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// authenticate returns the identity of token, with system:authenticated
// among its groups, or nil when the API server says the token is not
// valid. An error means the token could not be checked (the API server
// away, the review forbidden), which says nothing about the token.
func (t *tokenReviews) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	key := t.cacheKey(token)
	if cached, ok := t.identities.Get(key); ok {
		return cached.(*authenticationv1.UserInfo), nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	var review *authenticationv1.TokenReview
	err := withRetries(ctx, t.retry, func(ctx context.Context) error {
		var err error
		review, err = t.client.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reviewing the token: %w", err)
	}
	var identity *authenticationv1.UserInfo
	if review.Status.Authenticated {
		identity = withAuthenticatedGroup(review.Status.User)
	}
	t.identities.Add(key, identity, tokenReviewCacheTTL)
	return identity, nil
}

// withAuthenticatedGroup adds system:authenticated to the groups of u, as
// k8s.io/apiserver's AuthenticatedGroupAdder does, unless u is anonymous or
// already in system:authenticated or system:unauthenticated.
func withAuthenticatedGroup(u authenticationv1.UserInfo) *authenticationv1.UserInfo {
	if u.Username == anonymousUser || slices.Contains(u.Groups, authenticatedGroup) || slices.Contains(u.Groups, unauthenticatedGroup) {
		return &u
	}
	u.Groups = append(slices.Clip(u.Groups), authenticatedGroup)
	return &u
}

// accessReviews authorizes requests with SubjectAccessReviews for a verb
// on a non-resource URL, as k8s.io/apiserver's delegating authorizer does:
// allowed answers cached for allowCacheTTL, denied ones for denyCacheTTL,
// failures not cached. The cache is keyed by a SHA-256 of the review's
// spec, so that a long path takes no more room than a short one.
type accessReviews struct {
	client authorizationv1client.SubjectAccessReviewInterface
	retry  wait.Backoff
	// decisions maps a spec's hash to its SubjectAccessReviewStatus.
	decisions *utilcache.LRUExpireCache
}

func newAccessReviews(client authorizationv1client.SubjectAccessReviewInterface, entries int, clock utilcache.Clock) *accessReviews {
	return &accessReviews{client: client, retry: reviewRetry, decisions: utilcache.NewLRUExpireCacheWithClock(entries, clock)}
}

// authorize reports whether user may use verb on path, with the API
// server's reason. An authorizer with no opinion does not allow. An error
// means no decision could be had.
func (a *accessReviews) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	spec := authorizationv1.SubjectAccessReviewSpec{
		User:                  user.Username,
		UID:                   user.UID,
		Groups:                user.Groups,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}
	if user.Extra != nil {
		spec.Extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	encoded, err := json.Marshal(spec)
	if err != nil {
		return false, "", fmt.Errorf("encoding the access review: %w", err)
	}
	key := sha256.Sum256(encoded)
	var status authorizationv1.SubjectAccessReviewStatus
	if cached, ok := a.decisions.Get(key); ok {
		status = cached.(authorizationv1.SubjectAccessReviewStatus)
	} else {
		ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
		defer cancel()
		var review *authorizationv1.SubjectAccessReview
		err := withRetries(ctx, a.retry, func(ctx context.Context) error {
			var err error
			review, err = a.client.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return false, "", fmt.Errorf("reviewing access: %w", err)
		}
		status = review.Status
		ttl := denyCacheTTL
		if status.Allowed {
			ttl = allowCacheTTL
		}
		a.decisions.Add(key, status, ttl)
	}
	if status.Allowed && status.Denied {
		return false, status.Reason, errors.New("the SubjectAccessReview was both allowed and denied")
	}
	return status.Allowed, status.Reason, nil
}

// withRetries calls review until it succeeds, fails for good, or backoff
// runs out, as k8s.io/apiserver's webhooks do (WithExponentialBackoff with
// DefaultShouldRetry), and returns review's last error.
func withRetries(ctx context.Context, backoff wait.Backoff, review func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		last = review(ctx)
		switch {
		case last == nil:
			return true, nil
		case transient(last):
			return false, nil
		default:
			return false, last
		}
	})
	switch {
	case last != nil:
		return last
	case err != nil:
		return fmt.Errorf("waiting to retry: %w", err)
	}
	return nil
}

// transient: a failure worth another try (DefaultShouldRetry's list): a
// connection reset or lost, an internal error, a timeout, a throttle, or
// any answer that asks the client to come back later.
func transient(err error) bool {
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	_, later := apierrors.SuggestsClientDelay(err)
	return later
}
