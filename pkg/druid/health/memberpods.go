package health

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// MemberPods splits pods that carry an Etcd's member labels into the members, by name, and the names of
// the others. Labels alone are no proof of membership: anyone who may create pods in the namespace can
// copy them, and a pod counted as a member holds a quorum-loss recovery back, or keeps it waiting forever
// for "member pods" to go away. A member is a pod whose controller is the Etcd's StatefulSet sts (checked
// by UID), or a pod without any controller whose name is one of the Etcd's member pod names: between the
// orphaning delete of a StatefulSet and its successor's adoption, or after `kubectl delete
// --cascade=orphan`, a running member has no owner, and hiding it would let the safety checks (is a
// member still serving? are the member pods gone?) miss a Ready etcd. A pod controlled by anything else is
// never a member.
func MemberPods(pods []corev1.Pod, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) (members map[string]*corev1.Pod, strangers []string) {
	members = map[string]*corev1.Pod{}
	for i := range pods {
		pod := &pods[i]
		if (sts != nil && OwnedByStatefulSet(pod, sts)) || orphanedMember(pod, etcd) {
			members[pod.Name] = pod
			continue
		}
		strangers = append(strangers, pod.Name)
	}
	sort.Strings(strangers)
	return members, strangers
}

// OwnedByStatefulSet tells whether the pod's controller is sts (kind, name and UID).
func OwnedByStatefulSet(pod *corev1.Pod, sts *appsv1.StatefulSet) bool {
	owner := metav1.GetControllerOfNoCopy(pod)
	return owner != nil && owner.Kind == "StatefulSet" && owner.Name == sts.Name && owner.UID == sts.UID && sts.UID != ""
}

// orphanedMember tells whether the pod has no controller and is named like one of the Etcd's members.
func orphanedMember(pod *corev1.Pod, etcd *druidv1alpha1.Etcd) bool {
	if metav1.GetControllerOfNoCopy(pod) != nil {
		return false
	}
	_, named := druidv1alpha1.PodOrdinalOf(etcd, pod.Name)
	return named
}
