package validation_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// A copy Job's pod carries managed-by=etcd-druid; with part-of=<etcd> from spec.podLabels it would match
// that Etcd's member selector (PDB, client Service, NetworkPolicy); instance=<etcd> with name=etcd matches
// the legacy selector a StatefulSet of an older etcd-druid keeps. Druid's own label keys and the legacy
// selector's are refused.
func TestCopyTaskPodLabelsMayNotUseDruidsLabelKeys(t *testing.T) {
	for _, key := range []string{druidv1alpha1.LabelPartOfKey, druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelComponentKey, druidv1alpha1.LabelAppNameKey, "instance", "name"} {
		t.Run(key, func(t *testing.T) {
			task := validCopyTask()
			task.Spec.PodLabels = map[string]string{key: "etcd-main", "networking.gardener.cloud/to-dns": "allowed"}
			expectSingleError(t, validation.ValidateEtcdCopyBackupsTask(task), "spec.podLabels["+key+"]", field.ErrorTypeForbidden, "reserved")
		})
	}
}

func TestCopyTaskPodLabelsOfGardenerAreAccepted(t *testing.T) {
	task := validCopyTask()
	task.Spec.PodLabels = map[string]string{"networking.gardener.cloud/to-dns": "allowed", "networking.gardener.cloud/to-public-networks": "allowed"}
	if errs := validation.ValidateEtcdCopyBackupsTask(task); len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
}

// spec.labels go onto the Etcd's pods; part-of or managed-by with another value than druid's would make
// them look like another Etcd's members (or no druid member at all).
func TestEtcdLabelsMayNotClaimAnotherEtcdsMembers(t *testing.T) {
	cases := map[string]string{
		druidv1alpha1.LabelPartOfKey:    "etcd-events",
		druidv1alpha1.LabelManagedByKey: "someone-else",
	}
	for key, value := range cases {
		t.Run(key, func(t *testing.T) {
			etcd := validEtcd()
			etcd.Spec.Labels = map[string]string{key: value, "role": "main"}
			expectSingleError(t, validation.ValidateEtcd(etcd), "spec.labels["+key+"]", field.ErrorTypeInvalid, "must be")
		})
	}
}

func TestEtcdLabelsEqualToDruidsOwnAreAccepted(t *testing.T) {
	etcd := validEtcd()
	etcd.Spec.Labels = map[string]string{druidv1alpha1.LabelPartOfKey: etcd.Name, druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, "role": "main"}
	if errs := validation.ValidateEtcd(etcd); len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
}
