package podupdate

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

func TestPodHealth(t *testing.T) {
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	waiting := func(name, reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
	}
	running := func(name string, ready bool) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	for _, tc := range []struct {
		name   string
		status corev1.PodStatus
		want   Health
	}{
		{"pod Ready", corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{ready}}, Serving},
		{"etcd ready, sidecar crash-looping", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			running("etcd", true), waiting("backup-restore", "CrashLoopBackOff")}}, Serving},
		{"etcd crash-looping", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			waiting("etcd", "CrashLoopBackOff"), running("backup-restore", true)}}, Broken},
		{"image cannot be pulled (the pod stays Pending)", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
			waiting("etcd", "ImagePullBackOff"), running("backup-restore", true)}}, Broken},
		{"etcd exited", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "etcd", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled"}}}}}, Broken},
		{"pod Failed", corev1.PodStatus{Phase: corev1.PodFailed}, Broken},
		{"not scheduled yet", corev1.PodStatus{Phase: corev1.PodPending}, Starting},
		{"containers being created", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
			waiting("etcd", "ContainerCreating"), waiting("backup-restore", "ContainerCreating")}}, Starting},
		{"running, readiness failing", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			running("etcd", false), running("backup-restore", true)}}, Unready},
	} {
		if got, detail := PodHealth(&corev1.Pod{Status: tc.status}); got != tc.want {
			t.Errorf("%s: health %s (%s), want %s", tc.name, got, detail, tc.want)
		}
	}
}

func TestMembersTakeRevisionFromThePodAndRoleFromTheLease(t *testing.T) {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	pod := func(name, revision string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: revision}}}
	}
	lease := func(name, holder string) coordinationv1.Lease {
		return coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)}}
	}
	gone := pod("etcd-main-2", "a")
	gone.DeletionTimestamp = &metav1.Time{}
	members := Members(etcd, 3, map[string]*corev1.Pod{"etcd-main-0": pod("etcd-main-0", "a"), "etcd-main-2": gone, "etcd-main-3": pod("etcd-main-3", "a")},
		[]coordinationv1.Lease{lease("etcd-main-0", "1:2:Leader"), lease("etcd-main-2", "garbage")})
	if len(members) != 2 {
		t.Fatalf("members %+v, want ordinals 0 and 2 (1 has no pod, 3 is beyond the replicas)", members)
	}
	if m := members[0]; m.Pod != "etcd-main-0" || m.Revision != "a" || m.Role != druidv1alpha1.EtcdRoleLeader || m.Terminating {
		t.Errorf("member 0: %+v", m)
	}
	if m := members[1]; m.Ordinal != 2 || m.Role != "" || !m.Terminating {
		t.Errorf("member 2: %+v", m)
	}
}

func TestEtcdRunningLooksAtTheEtcdContainerOnly(t *testing.T) {
	pod := func(etcd, sidecar corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: etcdpod.ContainerEtcd, State: etcd}, {Name: "backup-restore", State: sidecar}}}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	crashing := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	if !EtcdRunning(pod(running, crashing)) {
		t.Error("etcd runs beside a crash-looping sidecar: it may vote")
	}
	if EtcdRunning(pod(crashing, running)) {
		t.Error("a crash-looping etcd does not run")
	}
	if EtcdRunning(&corev1.Pod{}) {
		t.Error("a pod without container statuses has no running etcd")
	}
}
