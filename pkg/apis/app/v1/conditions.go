package v1

// ConditionReady is True when the Deployment has rolled out the current
// generation with every desired replica available and the Service matches the
// spec. Its reason is one of the Reason constants below.
const ConditionReady = "Ready"

// Reasons of the Ready condition; they are part of the API, so that tools can
// act on them.
const (
	// ReasonAvailable: the current generation is rolled out and available.
	ReasonAvailable = "Available"
	// ReasonProgressing: the Deployment is rolling out or scaling.
	ReasonProgressing = "Progressing"
	// ReasonProgressDeadlineExceeded: the Deployment reported that its rollout
	// is stuck.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonReplicaFailure: the Deployment cannot create or delete pods, for
	// example because Pod Security admission or a quota refuses them; the
	// message carries the Deployment's reason and message.
	ReasonReplicaFailure = "ReplicaFailure"
	// ReasonPaused: the Deployment is paused (`kubectl rollout pause`), so
	// changes to the pod template are not rolled out until it is resumed.
	ReasonPaused = "Paused"
	// ReasonResourceConflict: a Deployment or Service of the same name exists
	// and is not controlled by this DeployObject; it is left untouched.
	ReasonResourceConflict = "ResourceConflict"
	// ReasonInvalidSpec: the API server rejected a child built from the spec;
	// the spec must change before the controller tries again.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonQuotaExceeded: a ResourceQuota of the namespace refused a child.
	// The controller retries with backoff, as the quota may be raised.
	ReasonQuotaExceeded = "QuotaExceeded"
	// ReasonForbidden: the API server refused to write a child: RBAC, an
	// admission webhook or a ValidatingAdmissionPolicy. The controller
	// retries with backoff, as permissions and policies may change.
	ReasonForbidden = "Forbidden"
	// ReasonConfigMissing: a ConfigMap or Secret the pods need (not marked
	// optional), or a key of it, does not exist; the message names it. The
	// Deployment is not written meanwhile, so that no pod is rolled into
	// CreateContainerConfigError; creating the object resumes at once.
	ReasonConfigMissing = "ConfigMissing"
	// ReasonRouteNotAccepted: a Gateway the HTTPRoute names refuses it
	// (Accepted=False) or cannot resolve its references (ResolvedRefs=False)
	// for a reason that lasts until someone acts, such as
	// NotAllowedByListeners or RefNotPermitted; the message carries the
	// Gateway's reason and message. The application is not reachable
	// through the route, so the DeployObject is not Ready.
	ReasonRouteNotAccepted = "RouteNotAccepted"
	// ReasonPodSecurityViolation: the controller runs with
	// --pod-security-profile=restricted and the spec explicitly sets what
	// Pod Security "restricted" forbids (a privileged container, an added
	// capability other than NET_BIND_SERVICE, runAsUser 0, ...); the message
	// names the fields. The Deployment is not written until the spec
	// changes.
	ReasonPodSecurityViolation = "PodSecurityViolation"
	// ReasonConfigRolloutPending: the pod template changed without a change
	// of the spec (the ConfigMaps or Secrets the pods use, or the
	// controller's pod security profile or version), and the rollout waits
	// for its turn under the controller's --max-concurrent-config-rollouts.
	// A change of the spec never waits.
	ReasonConfigRolloutPending = "ConfigRolloutPending"
	// ReasonCanaryProgressing: a canary (spec.canary) is under way: its
	// pods starting, a weight waiting for the Gateways, a promotion, or an
	// abort the spec asked for by changing (Reconciling).
	ReasonCanaryProgressing = "CanaryProgressing"
	// ReasonCanaryPaused: a canary waits at a pause step; the message
	// gives the kubectl commands that promote or abort it (Reconciling;
	// Argo CD shows Suspended).
	ReasonCanaryPaused = "CanaryPaused"
	// ReasonCanaryAborted: a canary was aborted, by the operator or by
	// autoAbort, and the stable revision serves all traffic until the
	// spec changes or the canary is retried; the message says why and
	// gives the retry command (Stalled).
	ReasonCanaryAborted = "CanaryAborted"
)

// The kstatus conditions (https://github.com/kubernetes-sigs/cli-utils/tree/master/pkg/kstatus),
// which GitOps tools such as Flux read to tell a rollout still going from one
// that cannot succeed. The controller derives them from the Ready condition,
// at the same generation, and writes them in the same status writes: at most
// one of them is present, with Status True and the reason and message of
// Ready, and neither is present while Ready is True.
const (
	// ConditionReconciling is True while the controller or the Deployment
	// controller is still working toward the current generation: children
	// being made, a rollout or a scale going on. Its reason is
	// ReasonProgressing, ReasonPaused for a rollout paused with `kubectl
	// rollout pause`, or ReasonConfigRolloutPending for a configuration
	// rollout waiting for its turn: the DeployObject is not done, and
	// nothing is broken.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when progress needs someone to act: its
	// reason is one of ReasonInvalidSpec, ReasonResourceConflict,
	// ReasonQuotaExceeded, ReasonForbidden, ReasonReplicaFailure,
	// ReasonProgressDeadlineExceeded and ReasonConfigMissing. The controller keeps retrying what may
	// resolve by itself (a quota raised, a foreign object deleted) and
	// removes the condition once it does.
	ConditionStalled = "Stalled"
)

// Conditions on the optional children, present only while the spec asks for
// the child. They do not change Ready: an application whose autoscaler
// cannot read metrics, or whose budget allows no disruption right now, is
// still available. A child that cannot be made at all (a foreign object of
// its name, a quota, a policy) turns Ready False as well, with the same
// reasons as the Deployment and the Service.
const (
	// ConditionDisruptionBudget tells whether the PodDisruptionBudget exists
	// and allows an eviction now: True with ReasonDisruptionsAllowed, False
	// with ReasonNoDisruptionsAllowed (too few healthy pods, as during a
	// rollout), ReasonProgressing (not made yet or not yet counted by the
	// disruption controller) or the reason that blocks it.
	ConditionDisruptionBudget = "DisruptionBudget"
	// ConditionAutoscaling tells whether the HorizontalPodAutoscaler exists
	// and can scale: True with the HorizontalPodAutoscaler's ScalingActive
	// reason (such as ValidMetricFound); False with its AbleToScale or
	// ScalingActive reason when either is False (such as
	// FailedGetResourceMetric, when no metrics server answers),
	// ReasonProgressing (not made or not yet seen by the autoscaler) or the
	// reason that blocks it.
	ConditionAutoscaling = "Autoscaling"

	// ReasonDisruptionsAllowed: the PodDisruptionBudget allows at least one
	// eviction now.
	ReasonDisruptionsAllowed = "DisruptionsAllowed"
	// ReasonNoDisruptionsAllowed: the PodDisruptionBudget allows no
	// eviction now, because fewer pods are healthy than it requires.
	ReasonNoDisruptionsAllowed = "NoDisruptionsAllowed"
)

// The route's condition, present only while spec.route is set. Like the
// other optional children's, it does not change Ready: no Gateway or
// ingress controller has to act before the application is available in the
// cluster. A route that cannot be made turns Ready False as well.
const (
	// ConditionRoute tells whether the route exists and is taken up: for an
	// HTTPRoute, True with ReasonAccepted when every parent Gateway
	// accepted it and resolved its backend, False with the Gateway
	// controller's Accepted or ResolvedRefs reason (such as
	// NotAllowedByListeners or BackendNotFound) when one did not; for an
	// Ingress, True with ReasonAddressAssigned once its ingress controller
	// gave it an address. False with ReasonProgressing while not made or
	// not yet taken up, ReasonGatewayAPIUnavailable, or the reason that
	// blocks it.
	ConditionRoute = "Route"

	// ReasonAccepted: every parent Gateway accepted the HTTPRoute and
	// resolved its references.
	ReasonAccepted = "Accepted"
	// ReasonAddressAssigned: the ingress controller gave the Ingress an
	// address.
	ReasonAddressAssigned = "AddressAssigned"
	// ReasonGatewayAPIUnavailable: the route asks for an HTTPRoute and the
	// cluster does not serve gateway.networking.k8s.io/v1 HTTPRoutes (the
	// Gateway API CRDs are not installed). Ready is False with this reason
	// too. The controller checks again periodically and makes the
	// HTTPRoute once they are installed, without a restart.
	ReasonGatewayAPIUnavailable = "GatewayAPIUnavailable"
)

// The monitor's condition, present only while spec.monitoring is set.
// Scraping is not part of the application being available: a cluster
// without prometheus-operator leaves Ready alone. Where the cluster serves
// the monitor's kind, Ready waits for the monitor to exist, as it does for
// every other child, and a monitor that cannot be made (a foreign object of
// its name, a policy) turns Ready False as well.
const (
	// ConditionMonitoring tells whether the ServiceMonitor or PodMonitor
	// exists and the NetworkPolicy lets its scraper in: True with
	// ReasonMonitorCreated, its kind and name in the message; False with
	// ReasonNetworkPolicyBlocksScraping, ReasonMonitoringAPIUnavailable,
	// ReasonProgressing (not made yet) or the reason that blocks it.
	ConditionMonitoring = "Monitoring"

	// ReasonMonitorCreated: the ServiceMonitor or PodMonitor exists and is
	// in line with the spec. Whether a Prometheus selects it is the
	// Prometheus' business (its serviceMonitorSelector or
	// podMonitorSelector, which spec.monitoring.metadata can satisfy).
	ReasonMonitorCreated = "MonitorCreated"
	// ReasonMonitoringAPIUnavailable: the cluster does not serve the
	// monitor's kind (monitoring.coreos.com/v1 servicemonitors or
	// podmonitors: prometheus-operator's CRDs are not installed). Ready is
	// not changed by it. The controller checks again periodically and makes
	// the monitor once they are installed, without a restart.
	ReasonMonitoringAPIUnavailable = "MonitoringAPIUnavailable"
	// ReasonNetworkPolicyBlocksScraping: spec.networkPolicy admits nobody
	// to monitoring.port: neither monitoringFrom is set nor does from reach
	// that port (from reaches spec.ports only, so not a sidecar's port).
	// Ready is not changed by it; the monitor is made all the same.
	ReasonNetworkPolicyBlocksScraping = "NetworkPolicyBlocksScraping"
)
