package validation_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// TestHarmfulValuesStoredBeforeTheRulesStillTakeUpdates: an Etcd stored with values the new rules refuse
// (written before them, or for upstream etcd-druid) takes an unrelated update; a change of such a field,
// or of the other half of a relation (a port that now collides), is judged as on create.
func TestHarmfulValuesStoredBeforeTheRulesStillTakeUpdates(t *testing.T) {
	stored := with(validEtcd(), func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.DefragmentationSchedule = ptr.To("@every 1s")
		e.Spec.Etcd.HeartbeatDuration = duration(1000 * time.Hour)
		e.Spec.Backup.LeaderElection = &druidv1alpha1.LeaderElectionSpec{ReelectionPeriod: duration(-5 * time.Second)}
		e.Spec.Backup.DeltaSnapshotMemoryLimit = quantity("1")
		e.Spec.Backup.Store.Prefix = "../other/etcd-main"
		e.Spec.Etcd.ClientPort, e.Spec.Etcd.ServerPort = ptr.To[int32](2379), ptr.To[int32](2379)
	})
	if errs := validation.ValidateEtcd(stored); len(errs) < 7 {
		t.Fatalf("create must refuse every harmful value, got %v", errs)
	}

	unrelated := with(stored.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 5 })
	if errs := validation.ValidateEtcdUpdate(unrelated, stored); len(errs) > 0 {
		t.Fatalf("an unrelated update must pass (ratchet): %v", errs)
	}

	changed := with(stored.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.HeartbeatDuration = duration(999 * time.Hour) })
	expectSingleError(t, validation.ValidateEtcdUpdate(changed, stored), "spec.etcd.heartbeatDuration", field.ErrorTypeInvalid, "at most 30s")

	// Ports: an Etcd whose ports are distinct gets a collision by changing one port; the changed port is named.
	distinct := validEtcd()
	colliding := with(distinct.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Port = ptr.To[int32](2379) })
	expectSingleError(t, validation.ValidateEtcdUpdate(colliding, distinct), "spec.backup.port", field.ErrorTypeInvalid, "must differ from spec.etcd.clientPort")
}
