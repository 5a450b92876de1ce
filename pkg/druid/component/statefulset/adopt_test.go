package statefulset

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// existing is a StatefulSet as stored, with the given selector and druid's other immutable fields.
func existing(etcd *druidv1alpha1.Etcd, selector map[string]string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: etcd.Name, Namespace: etcd.Namespace, CreationTimestamp: metav1.NewTime(time.Unix(1, 0))},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}, ServiceName: druidv1alpha1.PeerServiceName(etcd),
			PodManagementPolicy:  appsv1.ParallelPodManagement,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.VolumeClaimTemplateName(etcd)}}}},
	}
}

func TestImmutableDiffs(t *testing.T) {
	etcd := newEtcd()
	for _, tc := range []struct {
		name           string
		change         func(*appsv1.StatefulSet)
		selector       map[string]string
		recreate, kept []string // substrings
	}{
		{name: "druid's own", selector: druidv1alpha1.ManagedLabels(etcd)},
		{name: "old selector is recreated", selector: component.LegacySelector(etcd), recreate: []string{"spec.selector instance/name"}},
		{name: "OrderedReady is recreated", selector: druidv1alpha1.ManagedLabels(etcd), change: func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "" },
			recreate: []string{"podManagementPolicy"}},
		{name: "another selector is kept", selector: map[string]string{"app": "x"}, kept: []string{"spec.selector app=x kept"}},
		{name: "serviceName is kept", selector: druidv1alpha1.ManagedLabels(etcd), change: func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "etcd-events-client" },
			kept: []string{`spec.serviceName "etcd-events-client" kept`}},
		{name: "another claim name blocks the recreation", selector: component.LegacySelector(etcd),
			change: func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Name = "other" },
			kept:   []string{"spec.volumeClaimTemplates [other] kept", "not recreated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts := existing(etcd, tc.selector)
			if tc.change != nil {
				tc.change(sts)
			}
			recreate, kept := immutableDiffs(sts, etcd)
			expectSubstrings(t, "recreate", recreate, tc.recreate)
			expectSubstrings(t, "kept", kept, tc.kept)
		})
	}
	if recreate, kept := immutableDiffs(&appsv1.StatefulSet{}, etcd); recreate != nil || kept != nil {
		t.Errorf("a StatefulSet being created has nothing to keep: %v %v", recreate, kept)
	}
}

func expectSubstrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %q, want %d entries like %q", what, got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("%s[%d] = %q, want it to contain %q", what, i, got[i], want[i])
		}
	}
}

func TestRolledOut(t *testing.T) {
	sts := func(replicas int32, st appsv1.StatefulSetStatus) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)}, Status: st}
	}
	done := appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 3, ReadyReplicas: 3, CurrentRevision: "b", UpdateRevision: "b"}
	for _, tc := range []struct {
		name string
		sts  *appsv1.StatefulSet
		want bool
	}{
		{"every member updated and ready", sts(3, done), true},
		{"template not observed yet", sts(3, func() appsv1.StatefulSetStatus { s := done; s.ObservedGeneration = 1; return s }()), false},
		{"still rolling", sts(3, func() appsv1.StatefulSetStatus { s := done; s.CurrentRevision = "a"; s.UpdatedReplicas = 2; return s }()), false},
		{"updated but not ready", sts(3, func() appsv1.StatefulSetStatus { s := done; s.ReadyReplicas = 2; return s }()), false},
		{"hibernated", sts(0, appsv1.StatefulSetStatus{ObservedGeneration: 2, CurrentRevision: "a", UpdateRevision: "b"}), true},
		// Before Kubernetes v1.37 the StatefulSet controller never moves currentRevision under OnDelete.
		{"OnDelete, every member updated and ready", onDelete(sts(3, appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, CurrentRevision: "a", UpdateRevision: "b"})), true},
		{"OnDelete, a member not updated", onDelete(sts(3, appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 3, CurrentRevision: "a", UpdateRevision: "b"})), false},
	} {
		if got := rolledOut(tc.sts); got != tc.want {
			t.Errorf("%s: rolledOut = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func onDelete(sts *appsv1.StatefulSet) *appsv1.StatefulSet {
	sts.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
	return sts
}

func TestCarriedLabelsAndSelectorCheck(t *testing.T) {
	etcd := newEtcd()
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: druidv1alpha1.ManagedLabels(etcd)}}
	legacy := existing(etcd, component.LegacySelector(etcd))
	if err := checkSelects(legacy, template); err == nil {
		t.Error("a template without the old selector's labels must be refused")
	}
	carried := withLabels(template, component.LegacySelector(etcd))
	if err := checkSelects(legacy, carried); err != nil {
		t.Errorf("the template carrying the old selector's labels: %v", err)
	}
	if len(template.Labels) != 2 || carried.Labels["instance"] != etcd.Name || carried.Labels[druidv1alpha1.LabelPartOfKey] != etcd.Name {
		t.Errorf("withLabels must add to a copy: template %v, carried %v", template.Labels, carried.Labels)
	}
	expressions := existing(etcd, nil)
	expressions.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}
	if err := checkSelects(expressions, carried); err == nil || !strings.Contains(err.Error(), "field spec.selector") {
		t.Errorf("a selector the template cannot satisfy must be named: %v", err)
	}
}

// A claim template smaller than spec.storageCapacity is a reason to recreate the StatefulSet, but only once
// it is rolled out; one as large is none.
func TestClaimTemplateRecreation(t *testing.T) {
	etcd := newEtcd()
	rolled := func(s *appsv1.StatefulSet) *appsv1.StatefulSet {
		s.Spec.Replicas = ptr.To(int32(1))
		s.Status = appsv1.StatefulSetStatus{UpdatedReplicas: 1, ReadyReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r1"}
		return s
	}
	withRequest := func(s *appsv1.StatefulSet, q resource.Quantity) *appsv1.StatefulSet {
		s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: q}
		return s
	}
	smaller := withRequest(rolled(existing(etcd, druidv1alpha1.ManagedLabels(etcd))), resource.MustParse("1Mi"))
	if got := claimTemplateRecreation(smaller, etcd); !strings.Contains(got, "spec.volumeClaimTemplates storage 1Mi, below spec.storageCapacity") {
		t.Errorf("a smaller template on a rolled-out StatefulSet: %q", got)
	}
	rolling := smaller.DeepCopy()
	rolling.Status.UpdateRevision = "r2"
	if got := claimTemplateRecreation(rolling, etcd); got != "" {
		t.Errorf("a StatefulSet that is rolling must not be recreated for its claim template: %q", got)
	}
	same := withRequest(rolled(existing(etcd, druidv1alpha1.ManagedLabels(etcd))), *etcd.Spec.StorageCapacity)
	if got := claimTemplateRecreation(same, etcd); got != "" {
		t.Errorf("a template as large as the capacity: %q", got)
	}
}
