package children_test

import (
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/children"
	"deployobject.dev/controller/pkg/identity"
	"deployobject.dev/controller/pkg/testobjects"
)

func TestDesiredPDB(t *testing.T) {
	if children.DesiredPDB(testobjects.NewDeployObject()) != nil {
		t.Error("a PodDisruptionBudget for a DeployObject that asks for none")
	}
	for _, b := range []appv1.DisruptionBudget{
		{MinAvailable: ptr.To(intstr.FromInt32(1))},
		{MinAvailable: ptr.To(intstr.FromString("50%"))},
		{MaxUnavailable: ptr.To(intstr.FromString("25%"))},
	} {
		dobj := testobjects.NewDeployObject(func(d *appv1.DeployObject) { d.Spec.DisruptionBudget = &b })
		p := children.DesiredPDB(dobj)
		if !testobjects.EqualObjects(p.Spec.MinAvailable, b.MinAvailable) || !testobjects.EqualObjects(p.Spec.MaxUnavailable, b.MaxUnavailable) {
			t.Errorf("budget %+v: spec %+v", b, p.Spec)
		}
		if p.Spec.MinAvailable == b.MinAvailable && b.MinAvailable != nil {
			t.Error("the desired PodDisruptionBudget points into the DeployObject")
		}
		if !testobjects.EqualObjects(p.Spec.Selector.MatchLabels, children.SelectorLabels(dobj)) || !metav1.IsControlledBy(p, dobj) || p.Name != dobj.Name {
			t.Errorf("selector, owner or name wrong: %+v", p.ObjectMeta)
		}
	}
}

func TestMergePDB(t *testing.T) {
	policy := policyv1.AlwaysAllow
	for _, tc := range []struct {
		name       string
		drift      func(*policyv1.PodDisruptionBudget)
		wantChange bool
	}{
		{"in sync", func(*policyv1.PodDisruptionBudget) {}, false},
		{"others' label and eviction policy are theirs", func(p *policyv1.PodDisruptionBudget) {
			p.Labels["team"] = "a"
			p.Spec.UnhealthyPodEvictionPolicy = &policy
		}, false},
		{"minAvailable changed", func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromInt32(2)) }, true},
		{"minAvailable as a string", func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromString("1")) }, true},
		{"maxUnavailable added", func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1)) }, true},
		{"selector widened", func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector = &metav1.LabelSelector{} }, true},
		{"label removed", func(p *policyv1.PodDisruptionBudget) { delete(p.Labels, identity.ManagedByLabel) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(testobjects.WithBudget)
			live := testobjects.LivePDB(dobj)
			tc.drift(live)
			before := live.DeepCopy()
			got, changed := children.MergePDB(live, children.DesiredPDB(dobj))
			if changed != tc.wantChange {
				t.Fatalf("changed = %v, want %v", changed, tc.wantChange)
			}
			if !testobjects.EqualObjects(live, before) {
				t.Error("mergePDB modified live")
			}
			if _, again := children.MergePDB(got, children.DesiredPDB(dobj)); again {
				t.Error("the merged PodDisruptionBudget is not in line")
			}
			if !testobjects.EqualObjects(got.Spec.UnhealthyPodEvictionPolicy, live.Spec.UnhealthyPodEvictionPolicy) || got.Labels["team"] != live.Labels["team"] || got.UID != live.UID {
				t.Error("others' fields are not kept")
			}
		})
	}
}

// TestSlimPDBAnswersLikeTheFullObject: the cached copy gives the same
// answers as the whole object.
func TestSlimPDBAnswersLikeTheFullObject(t *testing.T) {
	for name, drift := range map[string]func(*policyv1.PodDisruptionBudget){
		"in sync":         func(*policyv1.PodDisruptionBudget) {},
		"minAvailable":    func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromInt32(2)) },
		"selector":        func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector.MatchLabels["x"] = "y" },
		"none allowed":    func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed, p.Status.CurrentHealthy = 0, 1 },
		"not yet counted": func(p *policyv1.PodDisruptionBudget) { p.Generation = 2 },
	} {
		t.Run(name, func(t *testing.T) {
			dobj := testobjects.NewDeployObject(testobjects.WithBudget)
			full := testobjects.LivePDB(dobj)
			full.Annotations = map[string]string{"note": "x"}
			full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
			full.Status.DisruptedPods = map[string]metav1.Time{"web-1": testobjects.FixedNow}
			drift(full)
			slim := children.SlimPDB(full.DeepCopy())
			_, a := children.MergePDB(full, children.DesiredPDB(dobj))
			_, b := children.MergePDB(slim, children.DesiredPDB(dobj))
			if a != b {
				t.Errorf("mergePDB changed: full %v, slim %v", a, b)
			}
			if a, b := children.DisruptionBudgetCondition(dobj, full, nil), children.DisruptionBudgetCondition(dobj, slim, nil); a != b {
				t.Errorf("condition: full %+v, slim %+v", a, b)
			}
			if slim.Annotations != nil || slim.ManagedFields != nil || slim.Status.DisruptedPods != nil {
				t.Error("the slim copy keeps what the controller never reads")
			}
		})
	}
}

func TestDisruptionBudgetCondition(t *testing.T) {
	dobj := testobjects.NewDeployObject(testobjects.WithBudget)
	for _, tc := range []struct {
		name       string
		pdb        func() *policyv1.PodDisruptionBudget
		problem    *children.Problem
		wantStatus metav1.ConditionStatus
		wantReason string
		wantIn     string
	}{
		{"allows", func() *policyv1.PodDisruptionBudget { return testobjects.LivePDB(dobj) }, nil,
			metav1.ConditionTrue, appv1.ReasonDisruptionsAllowed, "allows 1 eviction(s) now: 2 of 2 pods healthy, 1 required"},
		{"allows none", func() *policyv1.PodDisruptionBudget {
			p := testobjects.LivePDB(dobj)
			p.Status.DisruptionsAllowed, p.Status.CurrentHealthy = 0, 1
			return p
		}, nil, metav1.ConditionFalse, appv1.ReasonNoDisruptionsAllowed, "allows no eviction now: 1 of 2 pods healthy, 1 required"},
		{"not counted yet", func() *policyv1.PodDisruptionBudget {
			p := testobjects.LivePDB(dobj)
			p.Status = policyv1.PodDisruptionBudgetStatus{}
			return p
		}, nil, metav1.ConditionFalse, appv1.ReasonProgressing, "waiting for the disruption controller"},
		{"not made yet", func() *policyv1.PodDisruptionBudget { return nil }, nil,
			metav1.ConditionFalse, appv1.ReasonProgressing, "PodDisruptionBudget web does not exist yet"},
		{"blocked", func() *policyv1.PodDisruptionBudget { return nil },
			&children.Problem{Kind: children.KindPDB, Reason: appv1.ReasonResourceConflict, Message: "PodDisruptionBudget web exists and is not controlled by this DeployObject"},
			metav1.ConditionFalse, appv1.ReasonResourceConflict, "is not controlled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := children.DisruptionBudgetCondition(dobj, tc.pdb(), tc.problem)
			if c.Type != appv1.ConditionDisruptionBudget || c.Status != tc.wantStatus || c.Reason != tc.wantReason || !strings.Contains(c.Message, tc.wantIn) {
				t.Errorf("got %+v, want %s %s containing %q", c, tc.wantStatus, tc.wantReason, tc.wantIn)
			}
		})
	}
}
