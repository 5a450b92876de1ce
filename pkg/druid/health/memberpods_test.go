package health_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

func ownedPod(name, ownerKind, ownerName string, uid types.UID, controller bool) corev1.Pod {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shoot"}}
	if ownerKind != "" {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: ownerName, UID: uid, Controller: ptr.To(controller)}}
	}
	return pod
}

// Only pods whose controller is the Etcd's StatefulSet (by UID) are members; a pod that merely carries the
// member labels — created by a stranger, with a forged owner reference, or owned by something else — is
// not, and is named so that the caller can log it.
func TestMemberPodsAreTheStatefulSetsOnly(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot", UID: "sts-uid"}}
	pods := []corev1.Pod{
		ownedPod("etcd-main-0", "StatefulSet", "etcd-main", "sts-uid", true),
		ownedPod("etcd-main-1", "StatefulSet", "etcd-main", "forged-uid", true),
		ownedPod("etcd-main-2", "StatefulSet", "etcd-main", "sts-uid", false),
		ownedPod("stranger", "", "", "", false),
		ownedPod("deploy-abc", "ReplicaSet", "deploy", "rs-uid", true),
	}
	members, strangers := health.MemberPods(pods, sts)
	if len(members) != 1 || members["etcd-main-0"] == nil {
		t.Errorf("members = %v, want only etcd-main-0", keys(members))
	}
	if len(strangers) != 4 {
		t.Errorf("strangers = %v, want the 4 other pods", strangers)
	}

	members, strangers = health.MemberPods(pods, nil)
	if len(members) != 0 || len(strangers) != len(pods) {
		t.Errorf("without a StatefulSet: members = %v, strangers = %v; want none and all", keys(members), strangers)
	}
}

func keys(m map[string]*corev1.Pod) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
