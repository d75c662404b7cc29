package reconcile

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/kubernetes"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/caches"
	"deployobject.dev/controller/pkg/canary"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/configrollout"
	clientset "deployobject.dev/controller/pkg/generated/clientset/versioned"
	"deployobject.dev/controller/pkg/status"
)

// Children makes, updates and deletes the children of DeployObjects,
// reading them from the caches.
type Children struct {
	KubeClient kubernetes.Interface
	// Client re-reads a DeployObject before a child is adopted.
	Client clientset.Interface

	// Caches are those of caches.ChildKinds; the caches hold packed
	// objects (see pkg/caches/packed.go), ConfigMaps every ConfigMap as
	// hashes of its values (see pkg/caches/config.go).
	Caches caches.ChildCaches
	// Gateway holds the HTTPRoute and GRPCRoute caches once the cluster
	// serves them.
	Gateway *caches.GatewayRoutes
	// Monitors holds the ServiceMonitor and PodMonitor caches once the
	// cluster serves them.
	Monitors *caches.Monitors

	// Admitted remembers what admission made of Deployment writes it
	// changed.
	Admitted *children.AdmittedWrites
	// PodSecurity is filled into every pod template (--pod-security-profile).
	PodSecurity children.PodSecurityProfile
	// PodSecurityCheck, when not nil, keeps a template that breaks the
	// profile from being applied.
	PodSecurityCheck children.PodSecurityCheck
	// Rollouts decides whether configuration holds the Deployment.
	Rollouts *configrollout.Rollouts
	// Now is the clock a canary's steps are timed by; nil is time.Now.
	Now func() time.Time
}

// Result is what came of a sync of the children.
type Result struct {
	// Outcome is the children as they are afterwards, with the problems
	// that kept any of them from being made.
	Outcome status.Outcome
	// Actions describe each write, for the event.
	Actions []string
	// After, when not 0, is when the DeployObject must be synced again
	// whatever happens meanwhile (see configrollout.Gate and
	// canary.Decision).
	After time.Duration
	// Events are the canary's steps, each worth an event.
	Events []canary.Event
}

// Sync creates, updates or deletes the children of dobj as needed, one
// kind after the other, in the order of the list below (pkg/children has a
// file for each kind). A child that is blocked does not keep the others
// from being made; any other error ends the sync. The result is valid
// with an error too: its After must still be honoured.
func (r *Children) Sync(ctx context.Context, dobj *appv1.DeployObject) (Result, error) {
	p := r.newPass(dobj)
	for _, step := range []func(context.Context) error{
		// The pods cannot run before the ServiceAccount they run as and
		// the ConfigMap of their inline files exist (see prerequisite).
		p.serviceAccount,
		p.files,
		// The canary is decided with the Deployment, which it may hold,
		// pause or scale; its own ReplicaSet comes next.
		p.deployment,
		p.canaryReplicaSet,
		p.superseded,
		p.service,
		p.canaryService,
		p.pdb,
		p.hpa,
		p.networkPolicy,
		// The Ingress and the Gateway API routes stay until what replaces
		// them carries traffic (see routes.go).
		p.ingress,
		p.gatewayRoutes,
		p.monitors,
	} {
		if err := step(ctx); err != nil {
			return p.result, err
		}
	}
	return p.result, nil
}

// pass is one sync of the children of one DeployObject.
type pass struct {
	*Children
	dobj   *appv1.DeployObject
	result Result
	// out is result.Outcome, which the steps fill in.
	out *status.Outcome
	// recheckOwner checks, once per sync, that dobj is live before a
	// child is adopted (see ownerRecheck).
	recheckOwner func(context.Context) error

	// prerequisite names what the pods need and could not be made; ""
	// when nothing is missing.
	prerequisite string
	// filesName is the ConfigMap of inline files the spec asks for, named
	// by a hash of them, hashed once for the sync and the clean-up after
	// it; "" for none.
	filesName string
	// cachedDeployment is the Deployment as the cache holds it, read once
	// for the hold, the sync and the clean-up (one decode, see
	// pkg/caches/packed.go); cachedErr the error reading it.
	cachedDeployment *appsv1.Deployment
	cachedErr        error

	// canaryDecision is what pkg/canary decided for this sync (its zero
	// value without a canary), canaryStable the Deployment it decided on,
	// and canaryTemplate the pod template the spec asks for, which a
	// canary ReplicaSet is made of.
	canaryDecision canary.Decision
	canaryStable   canary.Stable
	canaryTemplate corev1.PodTemplateSpec
	// canaryHeld: the canary holds the live pod template, which differs
	// from the one the spec asks for.
	canaryHeld bool
	// templateRefused: the pod template the spec asks for breaks
	// --pod-security-profile, so no pod of it may run, a canary's neither.
	templateRefused bool
}

func (r *Children) newPass(dobj *appv1.DeployObject) *pass {
	p := &pass{Children: r, dobj: dobj, recheckOwner: ownerRecheck(r.Client, dobj)}
	p.out = &p.result.Outcome
	return p
}

// record notes the action of one child, and err as a problem of dobj with
// that child, or returns err when it is not one.
func (p *pass) record(kind, action string, err error) error {
	p.result.Actions = children.AppendAction(p.result.Actions, action)
	if err == nil {
		return nil
	}
	problem := children.ProblemOf(err)
	if problem == nil {
		return err
	}
	problem.Kind = kind
	p.out.Problems = append(p.out.Problems, *problem)
	return nil
}

// after keeps the earliest time, other than 0, to sync again.
func (p *pass) after(d time.Duration) {
	if d > 0 && (p.result.After == 0 || d < p.result.After) {
		p.result.After = d
	}
}

func (r *Children) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func (p *pass) service(ctx context.Context) error {
	ns := p.dobj.Namespace
	var action string
	var err error
	// During a canary in Route mode the Service selects only the stable
	// pods (see canary.Decision.Pin).
	p.out.Service, action, err = children.SyncOptional(ctx, p.dobj, children.WantsService(p.dobj), children.PinnedService(children.DesiredService(p.dobj), p.canaryDecision.Pin),
		children.ServiceOps(caches.ListerOf[corev1.Service](p.Caches).In(ns), p.KubeClient.CoreV1().Services(ns), p.recheckOwner))
	return p.record("Service", action, err)
}

func (p *pass) pdb(ctx context.Context) error {
	ns := p.dobj.Namespace
	var action string
	var err error
	p.out.PDB, action, err = children.SyncOptional(ctx, p.dobj, children.WantsDisruptionBudget(p.dobj), children.DesiredPDB(p.dobj),
		children.UpdatedOps(children.KindPDB, caches.ListerOf[policyv1.PodDisruptionBudget](p.Caches).In(ns), p.KubeClient.PolicyV1().PodDisruptionBudgets(ns), children.MergePDB, p.recheckOwner))
	return p.record(children.KindPDB, action, err)
}

func (p *pass) hpa(ctx context.Context) error {
	ns := p.dobj.Namespace
	desired, err := children.DesiredHPA(p.dobj)
	if err != nil {
		return err
	}
	var action string
	p.out.HPA, action, err = children.SyncOptional(ctx, p.dobj, children.WantsAutoscaling(p.dobj), desired,
		children.UpdatedOps(children.KindHPA, caches.ListerOf[autoscalingv2.HorizontalPodAutoscaler](p.Caches).In(ns), p.KubeClient.AutoscalingV2().HorizontalPodAutoscalers(ns), children.MergeHPA, p.recheckOwner))
	return p.record(children.KindHPA, action, err)
}

func (p *pass) networkPolicy(ctx context.Context) error {
	ns := p.dobj.Namespace
	var action string
	var err error
	p.out.NetworkPolicy, action, err = children.SyncOptional(ctx, p.dobj, children.WantsNetworkPolicy(p.dobj), children.DesiredNetworkPolicy(p.dobj),
		children.UpdatedOps(children.KindNetworkPolicy, caches.ListerOf[networkingv1.NetworkPolicy](p.Caches).In(ns), p.KubeClient.NetworkingV1().NetworkPolicies(ns), children.MergeNetworkPolicy, p.recheckOwner))
	return p.record(children.KindNetworkPolicy, action, err)
}
