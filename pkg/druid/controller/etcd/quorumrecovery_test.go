package etcd

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The quorum-loss recovery deletes the claims the StatefulSet made for its members, and no other claim
// of the namespace.
func TestIsMemberVolume(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main"}, Spec: appsv1.StatefulSetSpec{
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "main-etcd"}}},
	}}
	for name, want := range map[string]bool{
		"main-etcd-etcd-main-0":        true,
		"main-etcd-etcd-main-12":       true,
		"main-etcd-etcd-main-":         false,
		"main-etcd-etcd-main-0-backup": false,
		"main-etcd-etcd-main-events-0": false,
		"other-etcd-main-0":            false,
		"main-etcd-etcd-events-0":      false,
	} {
		if got := isMemberVolume(sts, name); got != want {
			t.Errorf("isMemberVolume(%q) = %v, want %v", name, got, want)
		}
	}
}
