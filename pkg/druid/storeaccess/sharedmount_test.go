package storeaccess

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRefuseSharedMount(t *testing.T) {
	mount := func(container, hostPath string) *LocalMount {
		return &LocalMount{
			Volume: corev1.Volume{VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPath}}},
			Mount:  corev1.VolumeMount{MountPath: "/home/nonroot/" + container, SubPath: container},
		}
	}
	if err := RefuseSharedMount(mount("a", "/var/backups"), mount("b", "/var/backups")); err != nil {
		t.Errorf("different containers: %v", err)
	}
	if err := RefuseSharedMount(mount("a", "/var/backups"), nil); err != nil {
		t.Errorf("one store not Local: %v", err)
	}
	err := RefuseSharedMount(mount("a", "/var/backups"), mount("a", "/srv/old"))
	if err == nil || !IsLocalStoreRefused(err) {
		t.Fatalf("the same container on two node directories: got %v, want a refusal", err)
	}
}
