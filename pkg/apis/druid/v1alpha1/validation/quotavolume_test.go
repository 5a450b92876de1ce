package validation_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// A small volume without a quota is what upstream etcd-druid's samples and small setups write: the
// default quota is not compared (it is not the user's choice), the webhook warns instead.
func TestUnsetQuotaIsNotComparedWithTheVolume(t *testing.T) {
	small := with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = nil; e.Spec.StorageCapacity = quantity("1Gi") })
	if errs := validation.ValidateEtcd(small); len(errs) != 0 {
		t.Fatalf("storageCapacity 1Gi without a quota refused: %v", errs)
	}
	if !containsText(validation.EtcdWarnings(small), "spec.etcd.quota: unset, etcd's default quota 8Gi exceeds spec.storageCapacity (1Gi)") {
		t.Errorf("want a warning that the default quota exceeds the volume, got %q", validation.EtcdWarnings(small))
	}
	if containsText(validation.EtcdWarnings(validEtcd()), "exceeds spec.storageCapacity") {
		t.Errorf("a quota that fits the volume must not be warned about: %q", validation.EtcdWarnings(validEtcd()))
	}

	explicit := with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = quantity("1Gi") })
	errs := validation.ValidateEtcd(explicit)
	if len(errs) != 2 || errs[0].Field != "spec.etcd.quota" || errs[1].Field != "spec.storageCapacity" {
		t.Errorf("an explicit quota 8Gi on a 1Gi volume: want errors on spec.etcd.quota and spec.storageCapacity, got %v", errs)
	}
}

// An Etcd stored with a quota above its volume must be able to move towards compliance one step at a
// time; a change that widens the gap is refused, naming the changed field.
func TestQuotaAboveVolumeRatchetsTowardsCompliance(t *testing.T) {
	stored := with(validEtcd(), func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.Quota = quantity("8Gi")
		e.Spec.StorageCapacity = quantity("5Gi")
	})
	if errs := validation.ValidateEtcd(stored); len(errs) == 0 {
		t.Fatal("the stored Etcd must be refused on create")
	}
	for name, mutate := range map[string]func(*druidv1alpha1.Etcd){
		"grow the volume": func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = quantity("6Gi") },
		"lower the quota": func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = quantity("6Gi") },
		"both, still above": func(e *druidv1alpha1.Etcd) {
			e.Spec.Etcd.Quota, e.Spec.StorageCapacity = quantity("7Gi"), quantity("6Gi")
		},
		"unrelated":                 func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 5 },
		"quota unset (default 8Gi)": func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = nil },
	} {
		if errs := validation.ValidateEtcdUpdate(with(stored.DeepCopy(), mutate), stored); len(errs) != 0 {
			t.Errorf("%s: %v; want admitted (the gap does not grow)", name, errs)
		}
	}
	shrunk := with(stored.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = quantity("4Gi") })
	shrunkErrs := validation.ValidateEtcdUpdate(shrunk, stored)
	if len(shrunkErrs) != 2 || !containsText([]string{shrunkErrs[0].Error(), shrunkErrs[1].Error()}, "must not exceed spec.storageCapacity (4Gi)") ||
		!containsText([]string{shrunkErrs[0].Error(), shrunkErrs[1].Error()}, "may not decrease") {
		t.Errorf("a smaller volume below the quota: %v; want the quota error and the shrink error", shrunkErrs)
	}
	raised := with(stored.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = quantity("9Gi") })
	expectSingleError(t, validation.ValidateEtcdUpdate(raised, stored), "spec.etcd.quota", field.ErrorTypeInvalid, "spec.etcd.quota (9Gi) must not exceed")

	// A quota set explicitly for the first time is compared, though the default it replaces was not.
	unset := with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = nil; e.Spec.StorageCapacity = quantity("5Gi") })
	set := with(unset.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = quantity("8Gi") })
	expectSingleError(t, validation.ValidateEtcdUpdate(set, unset), "spec.etcd.quota", field.ErrorTypeInvalid, "must not exceed")
}

func containsText(texts []string, want string) bool {
	for _, s := range texts {
		if strings.Contains(s, want) {
			return true
		}
	}
	return false
}

// The gap judgement covers the quota-versus-volume rule only: the other rules on the same fields are
// judged as usual on update.
func TestOtherQuotaAndVolumeRulesAreNotJudgedByTheGap(t *testing.T) {
	stored := validEtcd()
	tiny := with(stored.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = quantity("1") })
	expectSingleError(t, validation.ValidateEtcdUpdate(tiny, stored), "spec.etcd.quota", field.ErrorTypeInvalid, "must be at least 64Mi")
	zero := with(stored.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = quantity("0") })
	if errs := validation.ValidateEtcdUpdate(zero, stored); len(errs) == 0 {
		t.Error("storageCapacity 0 on update: admitted; want refused")
	}
}
