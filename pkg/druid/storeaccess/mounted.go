package storeaccess

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// MountedLocalDirProblems checks the node directories an existing pod spec (a StatefulSet's or Job's
// template) mounts through hostPath volumes against the allowed directories, and names every one outside
// them: the volume, the node directory (hostPath joined with the mount's subPath) and why. A druid before
// the container check wrote such mounts (container "../../var/lib/kubelet"); they keep running until the
// object is rewritten, so they must be reported rather than found by chance. Only the lexical path can be
// checked from here; druid's own pods carry no other hostPath volumes.
func MountedLocalDirProblems(pod *corev1.PodSpec, allowed config.LocalBackup) []string {
	var problems []string
	for _, v := range pod.Volumes {
		if v.HostPath == nil {
			continue
		}
		dirs := map[string]bool{}
		for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					dirs[path.Join(v.HostPath.Path, m.SubPath)] = true
				}
			}
		}
		if len(dirs) == 0 {
			dirs[path.Clean(v.HostPath.Path)] = true
		}
		for dir := range dirs {
			if err := allowed.Check(dir); err != nil {
				problems = append(problems, fmt.Sprintf("volume %s mounts the node directory %s: %v", v.Name, dir, err))
			}
		}
	}
	return problems
}
