package hostile

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

type opsTaskCase = Case[*druidv1alpha1.EtcdOpsTask]

// OpsTask is a valid on-demand full snapshot of etcd-main.
func OpsTask(namespace string) *druidv1alpha1.EtcdOpsTask {
	return &druidv1alpha1.EtcdOpsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace},
		Spec: druidv1alpha1.EtcdOpsTaskSpec{EtcdName: ptr.To("etcd-main"), Config: druidv1alpha1.EtcdOpsTaskConfig{
			OnDemandSnapshot: &druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull},
		}},
	}
}

// OpsTasks change one thing of OpsTask.
var OpsTasks = []opsTaskCase{
	{"no Etcd", func(o *druidv1alpha1.EtcdOpsTask) { o.Spec.EtcdName = nil }, Refused("spec.etcdName")},
	{"Etcd name no object name", func(o *druidv1alpha1.EtcdOpsTask) { o.Spec.EtcdName = ptr.To("Etcd_Main") }, Refused("spec.etcdName")},
	{"zero TTL", func(o *druidv1alpha1.EtcdOpsTask) { o.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) }, Refused("spec.ttlSecondsAfterFinished")},
	{"no operation", func(o *druidv1alpha1.EtcdOpsTask) { o.Spec.Config = druidv1alpha1.EtcdOpsTaskConfig{} }, Refused("spec.config")},
	{"full snapshot timeout of a second", func(o *druidv1alpha1.EtcdOpsTask) {
		o.Spec.Config.OnDemandSnapshot.TimeoutSecondsFull = ptr.To[int32](1)
	}, Refused("spec.config.onDemandSnapshot.timeoutSecondsFull")},
	{"delta snapshot timeout of a second", func(o *druidv1alpha1.EtcdOpsTask) {
		o.Spec.Config.OnDemandSnapshot.Type = druidv1alpha1.OnDemandSnapshotTypeDelta
		o.Spec.Config.OnDemandSnapshot.TimeoutSecondsDelta = ptr.To[int32](1)
	}, Refused("spec.config.onDemandSnapshot.timeoutSecondsDelta")},
	{"on-demand full snapshot", func(*druidv1alpha1.EtcdOpsTask) {}, Admitted},
}
