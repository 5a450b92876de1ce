package storeaccess

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

func hostPathPod(hostPath, subPath string) *corev1.PodSpec {
	return &corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "local-backup", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPath}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Containers: []corev1.Container{{Name: "backup-restore", VolumeMounts: []corev1.VolumeMount{{Name: "local-backup", MountPath: "/home/nonroot/x", SubPath: subPath}}}},
	}
}

// A StatefulSet written before the container check may mount a node directory outside the allowed ones;
// the check names it, counting the mount's subPath.
func TestMountedLocalDirProblems(t *testing.T) {
	allowed := config.LocalBackup{}
	for _, tc := range []struct {
		hostPath, subPath, want string
	}{
		{DefaultLocalHostPath + "/bkp", "", ""},      // written by a druid before subPath
		{DefaultLocalHostPath, "bkp", ""},            // written now
		{"/var/lib/kubelet", "", "/var/lib/kubelet"}, // container ../../../var/lib/kubelet, joined and cleaned
		{DefaultLocalHostPath, "../../x", "/etc/x"},  // a subPath the apiserver would refuse, still named
		{"/", "var/lib/kubelet", "/var/lib/kubelet"}, // the subPath counts
	} {
		problems := MountedLocalDirProblems(hostPathPod(tc.hostPath, tc.subPath), allowed)
		switch {
		case tc.want == "" && len(problems) != 0:
			t.Errorf("%s + %q: %v; want none", tc.hostPath, tc.subPath, problems)
		case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], "volume local-backup mounts the node directory "+tc.want)):
			t.Errorf("%s + %q: %v; want one naming %s", tc.hostPath, tc.subPath, problems, tc.want)
		}
	}
}
