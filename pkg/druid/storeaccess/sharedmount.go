package storeaccess

import (
	"fmt"
	"path"
)

// RefuseSharedMount refuses two Local stores of one pod (the copy Job's source and target) whose mounts
// fall on the same path, $HOME/<container>: the apiserver refuses a pod with two mounts at one path, and
// on one node directory the copy would read and write the same store. nil when either is not Local or the
// paths differ.
func RefuseSharedMount(target, source *LocalMount) error {
	if target == nil || source == nil || target.Mount.MountPath != source.Mount.MountPath {
		return nil
	}
	return refused(fmt.Errorf("source and target Local stores both use the container %q (mounted at %s; node directories %s and %s): give them different containers",
		path.Base(target.Mount.MountPath), target.Mount.MountPath, source.NodeDir(), target.NodeDir()))
}
