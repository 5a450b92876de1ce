package v1alpha1

import (
	"strings"
	"unicode"
)

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

// LocalPrefixProblem says why prefix cannot name a Local store's snapshots, or "" when it can. The store
// keeps an object under its key as a path, except where gocloud's fileblob (which writes the files)
// escapes the key: control characters, the slash after a segment that ends in "..", and anything that
// reads as one of its escapes ("__0x<hex>__"). Snapshots written under such a prefix would lie where a
// listing by the plain path does not look.
func LocalPrefixProblem(prefix string) string {
	switch {
	case strings.IndexFunc(prefix, unicode.IsControl) >= 0:
		return "must not contain control characters"
	case strings.Contains(prefix, "__0x"):
		return `must not contain "__0x": the Local store's files escape characters with it`
	}
	for _, segment := range strings.Split(prefix, "/") {
		if strings.HasSuffix(segment, "..") {
			return `must not have a segment that ends in "..": the Local store's files escape the slash after it, and ".." leaves the store's directory`
		}
	}
	return ""
}
