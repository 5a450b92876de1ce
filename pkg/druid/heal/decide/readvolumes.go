package decide

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReadVolumesAnnotation records on the StatefulSet, from the end of step 3 of the quorum-loss recovery,
// which member volume claims step 3 read ("<claim>=<uid>,…"). Step 4 deletes a claim only when this
// record names it with its UID: a claim created after the reading (by hand, or restored from a volume
// snapshot) may hold writes that exist nowhere else, and is read before anything is deleted.
const ReadVolumesAnnotation = "druid.gardener.cloud/quorum-loss-recovery-read-volumes"

// ReadVolumes is the ReadVolumesAnnotation value for the claims step 3 read.
func ReadVolumes(claims []*corev1.PersistentVolumeClaim) string {
	entries := make([]string, 0, len(claims))
	for _, c := range claims {
		entries = append(entries, c.Name+"="+string(c.UID))
	}
	slices.Sort(entries)
	return strings.Join(entries, ",")
}

// UnreadVolumes are the names of the claims that record (a ReadVolumesAnnotation value) does not name
// with their current UID. An empty record (a recovery an older druid began) names none.
func UnreadVolumes(record string, claims []*corev1.PersistentVolumeClaim) []string {
	read := map[string]bool{}
	for entry := range strings.SplitSeq(record, ",") {
		read[entry] = true
	}
	var unread []string
	for _, c := range claims {
		if !read[c.Name+"="+string(c.UID)] {
			unread = append(unread, c.Name)
		}
	}
	return unread
}
