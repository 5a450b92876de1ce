package podupdate

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// brokenWaitingReasons are the kubelet's reasons for a waiting container that will not start by itself.
var brokenWaitingReasons = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true, "ErrImageNeverPull": true,
	"InvalidImageName": true, "CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// Members are the member pods of the ordinals below replicas (pods by name, as health.MemberPods returns
// them), with the role each member's lease names. Health comes from the pod, which the kubelet keeps
// current, and not from the lease's renewals: a lease that stopped beside a Ready etcd means the sidecar or
// the apiserver is away, not the member (the heal flow judges it the same way); the role comes from the
// lease, since only the sidecar knows it.
func Members(etcd *druidv1alpha1.Etcd, replicas int32, pods map[string]*corev1.Pod, leases []coordinationv1.Lease) []Member {
	roles := map[string]druidv1alpha1.EtcdRole{}
	for _, l := range leases {
		if h, ok := health.ParseHolderIdentity(ptr.Deref(l.Spec.HolderIdentity, "")); ok {
			roles[l.Name] = h.Role
		}
	}
	var members []Member
	for i := 0; i < int(replicas); i++ {
		pod := pods[druidv1alpha1.PodName(etcd, i)]
		if pod == nil {
			continue
		}
		h, detail := PodHealth(pod)
		members = append(members, Member{Pod: pod.Name, Ordinal: i, Revision: pod.Labels[appsv1.ControllerRevisionHashLabelKey],
			Health: h, EtcdRunning: EtcdRunning(pod), Detail: detail, Terminating: pod.DeletionTimestamp != nil,
			Role: roles[druidv1alpha1.MemberLeaseName(etcd, i)]})
	}
	return members
}

// EtcdRunning tells whether the pod's etcd container runs: a member whose etcd runs may still vote in raft
// although its readiness probe fails (under load, catching up, defragmenting).
func EtcdRunning(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == etcdpod.ContainerEtcd {
			return c.State.Running != nil
		}
	}
	return false
}

// PodHealth classifies a member pod and says what on.
func PodHealth(pod *corev1.Pod) (Health, string) {
	if health.PodReady(pod) {
		return Serving, "pod Ready"
	}
	statuses := pod.Status.ContainerStatuses
	for _, c := range statuses {
		if c.Name == etcdpod.ContainerEtcd && c.Ready {
			return Serving, "etcd container ready"
		}
	}
	if pod.Status.Phase == corev1.PodFailed {
		return Broken, "pod Failed"
	}
	for _, c := range statuses {
		switch {
		case c.State.Terminated != nil:
			return Broken, fmt.Sprintf("%s container terminated: %s", c.Name, c.State.Terminated.Reason)
		case c.State.Waiting != nil && brokenWaitingReasons[c.State.Waiting.Reason]:
			return Broken, fmt.Sprintf("%s container %s", c.Name, c.State.Waiting.Reason)
		}
	}
	if pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "" || len(statuses) == 0 {
		return Starting, fmt.Sprintf("pod phase %q, containers not started", pod.Status.Phase)
	}
	for _, c := range statuses {
		if c.State.Waiting != nil {
			return Starting, fmt.Sprintf("%s container %s", c.Name, c.State.Waiting.Reason)
		}
	}
	return Unready, "containers run, pod not Ready"
}
