package v1alpha1

import "strings"

// LocalContainerProblem says why container cannot name a Local store's directory, or "" when it can. The
// Local provider mounts <hostPath>/<container> read-write from the node into the pods; only a single path
// segment keeps that directory below the host path druid allows, where "..", "a/b" or "/x" would name
// another node directory (for example /var/lib/kubelet).
func LocalContainerProblem(container string) string {
	switch {
	case container == "":
		return "must be one path segment, not empty"
	case container == "." || container == "..",
		strings.ContainsAny(container, "/\x00"):
		return "must be one path segment (no '/', not '.' or '..', no NUL): the Local provider mounts it as a directory below the allowed host path"
	}
	return ""
}
