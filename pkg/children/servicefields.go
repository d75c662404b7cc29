package children

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
)

// The Service fields spec.service sets beyond the type and ports. The
// controller owns each one only while the spec sets it; the record of
// owned keys (see metadata.go) tells a field the spec stopped setting,
// which goes back to the API server's default, from one someone else set,
// which is kept.

// Names of the owned fields in the record.
const (
	fieldExternalTrafficPolicy = "externalTrafficPolicy"
	fieldInternalTrafficPolicy = "internalTrafficPolicy"
	fieldTrafficDistribution   = "trafficDistribution"
	fieldLoadBalancerClass     = "loadBalancerClass"
	fieldSourceRanges          = "loadBalancerSourceRanges"
	fieldHeadless              = "headless"
)

// setServiceFields sets in spec the fields settings sets, and returns
// their names.
func setServiceFields(spec *corev1.ServiceSpec, settings *appv1.ServiceSettings) []string {
	var set []string
	if settings.ExternalTrafficPolicy != nil {
		spec.ExternalTrafficPolicy = *settings.ExternalTrafficPolicy
		set = append(set, fieldExternalTrafficPolicy)
	}
	if settings.InternalTrafficPolicy != nil {
		spec.InternalTrafficPolicy = ptr.To(*settings.InternalTrafficPolicy)
		set = append(set, fieldInternalTrafficPolicy)
	}
	if settings.TrafficDistribution != nil {
		spec.TrafficDistribution = ptr.To(*settings.TrafficDistribution)
		set = append(set, fieldTrafficDistribution)
	}
	if settings.LoadBalancerClass != nil {
		spec.LoadBalancerClass = ptr.To(*settings.LoadBalancerClass)
		set = append(set, fieldLoadBalancerClass)
	}
	if len(settings.LoadBalancerSourceRanges) > 0 {
		spec.LoadBalancerSourceRanges = append([]string(nil), settings.LoadBalancerSourceRanges...)
		set = append(set, fieldSourceRanges)
	}
	if ptr.Deref(settings.Headless, false) {
		spec.ClusterIP = corev1.ClusterIPNone
		set = append(set, fieldHeadless)
	}
	return set
}

// serviceFieldsInSync reports whether live holds every field desired sets
// and is headless exactly when desired is. The fields the spec stopped
// setting show in the record, which childMetadataInSync compares.
func serviceFieldsInSync(live, desired *corev1.Service) bool {
	l, d := live.Spec, desired.Spec
	return (d.ExternalTrafficPolicy == "" || l.ExternalTrafficPolicy == d.ExternalTrafficPolicy) &&
		(d.InternalTrafficPolicy == nil || equality.Semantic.DeepEqual(l.InternalTrafficPolicy, d.InternalTrafficPolicy)) &&
		(d.TrafficDistribution == nil || equality.Semantic.DeepEqual(l.TrafficDistribution, d.TrafficDistribution)) &&
		(d.LoadBalancerSourceRanges == nil || equality.Semantic.DeepEqual(l.LoadBalancerSourceRanges, d.LoadBalancerSourceRanges)) &&
		!ServiceNeedsRecreation(live, desired)
}

// mergeServiceFields sets in out, live's spec, the fields desired sets,
// and resets those live's record says the controller set and desired no
// longer does to what the API server fills in.
func mergeServiceFields(out *corev1.ServiceSpec, live, desired *corev1.Service) {
	owned := ownedFields(live)
	d := desired.Spec
	switch {
	case d.ExternalTrafficPolicy != "":
		out.ExternalTrafficPolicy = d.ExternalTrafficPolicy
	case owned[fieldExternalTrafficPolicy] && out.Type != corev1.ServiceTypeClusterIP:
		out.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	switch {
	case d.InternalTrafficPolicy != nil:
		out.InternalTrafficPolicy = d.InternalTrafficPolicy
	case owned[fieldInternalTrafficPolicy]:
		out.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	}
	switch {
	case d.TrafficDistribution != nil:
		out.TrafficDistribution = d.TrafficDistribution
	case owned[fieldTrafficDistribution]:
		out.TrafficDistribution = nil
	}
	switch {
	case d.LoadBalancerSourceRanges != nil:
		out.LoadBalancerSourceRanges = d.LoadBalancerSourceRanges
	case owned[fieldSourceRanges]:
		out.LoadBalancerSourceRanges = nil
	}
	if d.LoadBalancerClass != nil {
		out.LoadBalancerClass = d.LoadBalancerClass
	}
}

// ServiceNeedsRecreation reports whether live can become desired only by
// being created again: the API server allows no change of the cluster IP
// (to or from headless) and of a load balancer's class. Only a value the
// spec sets, or set before (live's record), is the controller's to change:
// an adopted Service keeps what its maker chose.
func ServiceNeedsRecreation(live, desired *corev1.Service) bool {
	owned := ownedFields(live)
	wantHeadless := desired.Spec.ClusterIP == corev1.ClusterIPNone
	if (live.Spec.ClusterIP == corev1.ClusterIPNone) != wantHeadless && (wantHeadless || owned[fieldHeadless]) {
		return true
	}
	return live.Spec.Type == corev1.ServiceTypeLoadBalancer && desired.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		(desired.Spec.LoadBalancerClass != nil || owned[fieldLoadBalancerClass]) &&
		!equality.Semantic.DeepEqual(live.Spec.LoadBalancerClass, desired.Spec.LoadBalancerClass)
}

// RecreationError: the Service was deleted, to be created again by the
// next sync, as a change the spec asks for cannot be made in place.
type RecreationError struct {
	Name, Why string
}

func (e *RecreationError) Error() string {
	return fmt.Sprintf("recreating Service %s: %s cannot change on a live Service", e.Name, e.Why)
}

// recreationReason says which field forces the recreation.
func recreationReason(live, desired *corev1.Service) string {
	if (live.Spec.ClusterIP == corev1.ClusterIPNone) != (desired.Spec.ClusterIP == corev1.ClusterIPNone) {
		return "headless (clusterIP None)"
	}
	return "loadBalancerClass"
}

// headlessOnly keeps a cluster IP only when it says the Service is
// headless, the one value the controller compares.
func headlessOnly(clusterIP string) string {
	if clusterIP == corev1.ClusterIPNone {
		return clusterIP
	}
	return ""
}

// ServiceOps are UpdatedOps for the Service whose write deletes a live
// Service that cannot become desired in place, with a UID precondition,
// and returns a *RecreationError: the next sync, which the deletion
// triggers, creates it again.
func ServiceOps(cached func(string) (*corev1.Service, error), client Client[*corev1.Service], recheckOwner func(context.Context) error) Ops[*corev1.Service] {
	ops := UpdatedOps("Service", cached, client, MergeService, recheckOwner)
	update := ops.Write
	ops.Write = func(ctx context.Context, live, desired *corev1.Service) (*corev1.Service, error) {
		if !ServiceNeedsRecreation(live, desired) {
			return update(ctx, live, desired)
		}
		uid := live.UID
		if err := client.Delete(ctx, live.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting Service %s to recreate it: %w", live.Name, err)
		}
		return nil, &RecreationError{Name: live.Name, Why: recreationReason(live, desired)}
	}
	return ops
}
