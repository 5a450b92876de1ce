package fullsnapshot

import (
	"encoding/json"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// BeforeUpdateAnnotation on the StatefulSet records the full snapshot druid took before an update that
// stops the members (hibernation, new images), as JSON (Record). It is written before the update itself,
// so that a spec run that comes back after the snapshot — a failed write, a requeue, a restarted druid —
// finds the snapshot for that very update taken and does not take another; and it keeps the snapshot's
// revision for status.lastFullSnapshot while the full snapshot lease lags behind it.
const BeforeUpdateAnnotation = "druid.gardener.cloud/full-snapshot-before-update"

// Record is the value of BeforeUpdateAnnotation.
type Record struct {
	// For names the update the snapshot was taken for (see the Etcd controller's updateKey): the Etcd's
	// and the StatefulSet's generations and the target, so that a later update, even to the same target,
	// takes a snapshot of its own.
	For string `json:"for"`
	// Revision is the snapshot's last revision as the sidecar reported it; 0 when its answer named none.
	Revision int64 `json:"revision,omitempty"`
	// Name is the snapshot's object name in the store, when the sidecar reported it.
	Name string `json:"name,omitempty"`
	// TakenAt is when the sidecar took the snapshot (or, without its report, when druid got the answer).
	TakenAt metav1.Time `json:"takenAt"`
}

// NewRecord records taken (nil when the sidecar's answer named no snapshot) for the update key, at now
// when the answer carries no time.
func NewRecord(key string, taken *druidv1alpha1.SnapshotStatus, now time.Time) Record {
	r := Record{For: key, TakenAt: metav1.NewTime(now.Truncate(time.Second))}
	if taken != nil {
		r.Revision, r.Name = taken.EndRevision, ptr.Deref(taken.Name, "")
		if !taken.Timestamp.IsZero() {
			r.TakenAt = taken.Timestamp
		}
	}
	return r
}

// Encode is the annotation value.
func (r Record) Encode() string {
	data, _ := json.Marshal(r) // a struct of strings, numbers and a time: never fails
	return string(data)
}

// RecordOf reads the StatefulSet's record; false when there is none or it does not parse.
func RecordOf(sts *appsv1.StatefulSet) (Record, bool) {
	if sts == nil || sts.Annotations[BeforeUpdateAnnotation] == "" {
		return Record{}, false
	}
	var r Record
	if err := json.Unmarshal([]byte(sts.Annotations[BeforeUpdateAnnotation]), &r); err != nil || r.For == "" {
		return Record{}, false
	}
	return r, true
}

// Snapshot is the recorded snapshot as status.lastFullSnapshot shows one; nil without a revision.
func (r Record) Snapshot() *druidv1alpha1.SnapshotStatus {
	if r.Revision <= 0 {
		return nil
	}
	s := &druidv1alpha1.SnapshotStatus{EndRevision: r.Revision, Timestamp: r.TakenAt}
	if r.Name != "" {
		s.Name = ptr.To(r.Name)
	}
	return s
}

// Newer is the snapshot with the higher revision of a and b (a when equal), either may be nil. The status
// takes the full snapshot lease's snapshot or the recorded one, whichever is newer: the lease may lag
// behind the snapshot druid just requested, and the record is older than any later scheduled snapshot.
func Newer(a, b *druidv1alpha1.SnapshotStatus) *druidv1alpha1.SnapshotStatus {
	if a == nil || (b != nil && b.EndRevision > a.EndRevision) {
		return b
	}
	return a
}
