package children

import (
	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// RoutePath is the route's path prefix; the API server defaults it to "/",
// and a DeployObject read before that default existed has none.
func RoutePath(r *appv1.Route) string {
	if r.Path == "" {
		return "/"
	}
	return r.Path
}

// LoadBalancerHost is the address of one load balancer ingress point: its IP, or its
// host name when it has no IP.
func LoadBalancerHost(ip, hostname string) string {
	if ip != "" {
		return ip
	}
	return hostname
}
