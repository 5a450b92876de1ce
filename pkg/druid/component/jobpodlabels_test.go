package component_test

import (
	"testing"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// A Job pod never carries both member selector labels, nor the legacy selector's keys (instance, name),
// whatever the user's labels say, and druid's own labels win over the user's.
func TestJobPodLabelsNeverMatchTheMemberSelector(t *testing.T) {
	user := map[string]string{
		"instance":                         "etcd-main",
		"name":                             "etcd",
		druidv1alpha1.LabelPartOfKey:       "etcd-main",
		druidv1alpha1.LabelManagedByKey:    "someone",
		druidv1alpha1.LabelAppNameKey:      "etcd-druid",
		"networking.gardener.cloud/to-dns": "allowed",
	}
	got := component.JobPodLabels("copy", "etcd-main-copy", user)
	if _, ok := got[druidv1alpha1.LabelPartOfKey]; ok {
		t.Errorf("a Job pod carries %s: %v", druidv1alpha1.LabelPartOfKey, got)
	}
	want := map[string]string{
		druidv1alpha1.LabelManagedByKey:    druidv1alpha1.LabelManagedByValue,
		druidv1alpha1.LabelComponentKey:    "copy",
		druidv1alpha1.LabelAppNameKey:      "etcd-main-copy",
		"networking.gardener.cloud/to-dns": "allowed",
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[k], v)
		}
	}
}
