package health

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

var (
	now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	th  = Thresholds{Unknown: time.Minute, NotReady: 5 * time.Minute}
)

func testEtcd(replicas int32) *druidv1alpha1.Etcd {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}, Spec: druidv1alpha1.EtcdSpec{Replicas: replicas}}
	druidv1alpha1.SetDefaults(e)
	return e
}

// lease is a member or snapshot lease; renewedAgo < 0 means never renewed.
func lease(name, holder string, renewedAgo time.Duration) coordinationv1.Lease {
	l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shoot"}}
	if holder != "" {
		l.Spec.HolderIdentity = ptr.To(holder)
	}
	if renewedAgo >= 0 {
		l.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-renewedAgo)}
	}
	return l
}

func pod(name string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}
}

func member(name string, status druidv1alpha1.EtcdMemberConditionStatus) druidv1alpha1.EtcdMemberStatus {
	return druidv1alpha1.EtcdMemberStatus{Name: name, Status: status}
}
