package health

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemberPods splits pods that carry an Etcd's member labels into the members — pods whose controller is
// the Etcd's StatefulSet sts, checked by UID — by name, and the names of the others. Labels alone are no
// proof of membership: anyone who may create pods in the namespace can copy them, and a pod counted as a
// member holds a quorum-loss recovery back, or keeps it waiting forever for "member pods" to go away.
// Without a StatefulSet no pod is a member.
func MemberPods(pods []corev1.Pod, sts *appsv1.StatefulSet) (members map[string]*corev1.Pod, strangers []string) {
	members = map[string]*corev1.Pod{}
	for i := range pods {
		pod := &pods[i]
		if sts != nil && OwnedByStatefulSet(pod, sts) {
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
