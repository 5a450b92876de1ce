package webhook

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

type opsTaskCase = hostileCase[*druidv1alpha1.EtcdOpsTask]

// sweepOpsTask is a valid on-demand full snapshot of etcd-main.
func sweepOpsTask(namespace string) *druidv1alpha1.EtcdOpsTask {
	return &druidv1alpha1.EtcdOpsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace},
		Spec: druidv1alpha1.EtcdOpsTaskSpec{EtcdName: ptr.To("etcd-main"), Config: druidv1alpha1.EtcdOpsTaskConfig{
			OnDemandSnapshot: &druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull},
		}},
	}
}

var hostileOpsTasks = []opsTaskCase{
	{"no Etcd", func(o *druidv1alpha1.EtcdOpsTask) { o.Spec.EtcdName = nil }, refused("spec.etcdName")},
	{"Etcd name no object name", func(o *druidv1alpha1.EtcdOpsTask) { o.Spec.EtcdName = ptr.To("Etcd_Main") }, refused("spec.etcdName")},
	{"zero TTL", func(o *druidv1alpha1.EtcdOpsTask) { o.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) }, refused("spec.ttlSecondsAfterFinished")},
	{"no operation", func(o *druidv1alpha1.EtcdOpsTask) { o.Spec.Config = druidv1alpha1.EtcdOpsTaskConfig{} }, refused("spec.config")},
	{"full snapshot timeout of a second", func(o *druidv1alpha1.EtcdOpsTask) {
		o.Spec.Config.OnDemandSnapshot.TimeoutSecondsFull = ptr.To[int32](1)
	}, refused("spec.config.onDemandSnapshot.timeoutSecondsFull")},
	{"delta snapshot timeout of a second", func(o *druidv1alpha1.EtcdOpsTask) {
		o.Spec.Config.OnDemandSnapshot.Type = druidv1alpha1.OnDemandSnapshotTypeDelta
		o.Spec.Config.OnDemandSnapshot.TimeoutSecondsDelta = ptr.To[int32](1)
	}, refused("spec.config.onDemandSnapshot.timeoutSecondsDelta")},
	{"on-demand full snapshot", func(*druidv1alpha1.EtcdOpsTask) {}, admitted},
}
