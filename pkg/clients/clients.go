package clients

import (
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	_ "k8s.io/component-base/logs/json/register"

	"deployobject.dev/controller/pkg/options"
)

// BuiltIn is cfg for clients of built-in kinds, which speak
// contentType. The content type is set even when it is protobuf, which
// client-go's generated clients would pick by themselves: an explicit
// JSON would otherwise be the only way the flag showed, and the choice
// would depend on client-go's version. Protobuf answers still fall back to
// JSON for a kind that has no protobuf form.
func BuiltIn(cfg *rest.Config, contentType string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = contentType
	if contentType == options.ContentTypeProtobuf {
		c.AcceptContentTypes = options.ContentTypeProtobuf + "," + options.ContentTypeJSON
	}
	return c
}

// Dedicated is cfg for a client of its own: requests of the
// controller's clients never hold it back, and each of its requests gives
// up after timeout.
func Dedicated(cfg *rest.Config, name string, timeout time.Duration) *rest.Config {
	c := rest.CopyConfig(cfg)
	// client-go's default limits are plenty for a few requests per second.
	c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(rest.DefaultQPS, rest.DefaultBurst)
	c.Timeout = timeout
	return rest.AddUserAgent(c, name)
}

// LeaderElection is the configuration of the lease's client. A request
// gives up after half the renew deadline, so that one request stuck on a
// dead connection leaves time to retry before the lease is given up.
func LeaderElection(cfg *rest.Config, renewDeadline time.Duration) *rest.Config {
	return Dedicated(cfg, "leader-election", renewDeadline/2)
}
