package health_test

import (
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

func ownedPod(name, ownerKind, ownerName string, uid types.UID, controller bool) corev1.Pod {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shoot"}}
	if ownerKind != "" {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: ownerName, UID: uid, Controller: ptr.To(controller)}}
	}
	return pod
}

var memberEtcd = &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}

// Pods controlled by the Etcd's StatefulSet (by UID) are members, and so are pods without any controller
// whose name is one of the Etcd's member pod names: a member orphaned while its StatefulSet is recreated
// (adoption) or by `kubectl delete --cascade=orphan` may still run etcd, and the safety checks must see
// it. A pod controlled by anything else — a forged UID, a ReplicaSet — is not a member, and neither is an
// uncontrolled pod under another name; those are named so that the caller can log them.
func TestMemberPodsAreTheStatefulSetsAndOrphanedMembers(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot", UID: "sts-uid"}}
	pods := []corev1.Pod{
		ownedPod("etcd-main-0", "StatefulSet", "etcd-main", "sts-uid", true),
		ownedPod("etcd-main-1", "StatefulSet", "etcd-main", "forged-uid", true),
		ownedPod("etcd-main-2", "StatefulSet", "etcd-main", "sts-uid", false), // a reference, but no controller
		ownedPod("etcd-main-3", "", "", "", false),
		ownedPod("stranger", "", "", "", false),
		ownedPod("etcd-main-x", "", "", "", false),
		ownedPod("deploy-abc", "ReplicaSet", "deploy", "rs-uid", true),
		ownedPod("etcd-main-4", "ReplicaSet", "deploy", "rs-uid", true),
	}
	members, strangers := health.MemberPods(pods, memberEtcd, sts)
	if got, want := keys(members), []string{"etcd-main-0", "etcd-main-2", "etcd-main-3"}; !equal(got, want) {
		t.Errorf("members = %v, want %v", got, want)
	}
	if want := []string{"deploy-abc", "etcd-main-1", "etcd-main-4", "etcd-main-x", "stranger"}; !equal(strangers, want) {
		t.Errorf("strangers = %v, want %v", strangers, want)
	}

	members, strangers = health.MemberPods(pods, memberEtcd, nil)
	if got, want := keys(members), []string{"etcd-main-2", "etcd-main-3"}; !equal(got, want) {
		t.Errorf("without a StatefulSet: members = %v, want the uncontrolled member pods %v", got, want)
	}
	if len(strangers) != len(pods)-2 {
		t.Errorf("without a StatefulSet: strangers = %v, want all controlled pods and the misnamed ones", strangers)
	}
}

func keys(m map[string]*corev1.Pod) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
