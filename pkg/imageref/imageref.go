// Package imageref splits container image references. It is the one place that does, for the Gardener side
// (chart image values), the local seed's bootstrap and druid's per-image capabilities, and it imports
// nothing of the project, so that each of them can use it.
package imageref

import "strings"

// Split splits repository[:tag][@digest]; a colon before the last slash belongs to a registry port.
func Split(image string) (repository, tag, digest string) {
	image, digest, _ = strings.Cut(image, "@")
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return image, "", digest
	}
	return image[:i], image[i+1:], digest
}
