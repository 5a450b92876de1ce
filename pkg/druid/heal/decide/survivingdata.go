package decide

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// Step 3 of the quorum-loss recovery (SavingSurvivingData) decides, from what every member volume holds,
// whether and which volume must be saved to the backup store before step 4 deletes them all. Why: the
// volumes of the members that were not lost may hold writes beyond the last snapshot (the backup leader
// uploads deltas only every delta period), and deleting them would lose acknowledged writes that exist
// nowhere else. The decision is here, a pure function, so that every combination is tested
// without Jobs; the controller runs the Jobs that read and upload (etcdbrctl data-revision and
// preserve-data) and feeds their results in.

// ReadingState is where the reading of one member volume stands.
type ReadingState int

const (
	// ReadingPending: the volume's data-revision Job has not reported yet.
	ReadingPending ReadingState = iota
	// ReadingDone: the Job reported the volume's revision, or that it holds no data.
	ReadingDone
	// ReadingFailed: the Job failed or reported nothing usable; what the volume holds is unknown.
	ReadingFailed
)

// VolumeReading is what is known about one member volume (PVC).
type VolumeReading struct {
	// Claim is the PVC's name.
	Claim string
	State ReadingState
	// Revision is the revision etcd would serve from the volume (WAL replayed); only when Valid.
	Revision int64
	// Valid: the volume holds etcd data that etcd can serve.
	Valid bool
	// Empty: the volume holds no member directory at all (never initialized, or wiped): nothing to lose.
	Empty bool
	// Problem says why the reading failed, or why the data is not valid.
	Problem string
	// MovedAside are data directories the sidecar's initializer moved aside and kept on the volume (not
	// served, but possibly holding writes found nowhere else).
	MovedAside []string
}

// SurvivingDataPlan is what step 3 does next.
type SurvivingDataPlan struct {
	// Blocked are the volumes ("<claim>: <problem>") whose content cannot be judged: a failed reading, or
	// data that is there but not valid (a corrupt or incomplete member directory may still hold writes
	// that are nowhere else). Any of them stops the recovery for manual intervention; nothing is deleted.
	Blocked []string
	// Pending are the volumes whose reading has not reported yet.
	Pending []string
	// Target is the most advanced volume (highest revision, the lowest claim name among equals, so that
	// every run picks the same one); nil when no volume holds valid data.
	Target *VolumeReading
	// Preserve tells whether Target's revision is above what the backup store holds, so that it must be
	// uploaded as the newest full snapshot before any volume is deleted.
	Preserve bool
}

// Ready tells whether every volume was read and none blocks: step 3 may preserve Target (if Preserve)
// and then move on to deleting the volumes.
func (p SurvivingDataPlan) Ready() bool { return len(p.Blocked) == 0 && len(p.Pending) == 0 }

// PlanSurvivingData decides step 3 from the readings of every member volume and the newest revision the
// backup store is known to hold (BackupRevision; 0 when unknown, which makes any valid volume worth
// saving). A volume that is empty holds nothing to lose; one that is not valid but not empty, or that
// could not be read, blocks: when in doubt druid keeps the data and asks for a human.
func PlanSurvivingData(readings []VolumeReading, backupRevision int64) SurvivingDataPlan {
	sorted := append([]VolumeReading(nil), readings...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Claim < sorted[j].Claim })
	var plan SurvivingDataPlan
	for i := range sorted {
		r := &sorted[i]
		switch {
		case r.State == ReadingPending:
			plan.Pending = append(plan.Pending, r.Claim)
		case r.State == ReadingFailed:
			plan.Blocked = append(plan.Blocked, fmt.Sprintf("%s: cannot be read: %s", r.Claim, r.Problem))
		case len(r.MovedAside) > 0:
			// Nothing moved aside is ever deleted by the stack; deleting the volume would.
			plan.Blocked = append(plan.Blocked, fmt.Sprintf("%s: keeps data dirs moved aside by the initializer (%s): save what they hold "+
				"and remove them, then delete the volume's data-revision Job to read it again", r.Claim, strings.Join(r.MovedAside, ", ")))
		case r.Valid:
			if plan.Target == nil || r.Revision > plan.Target.Revision {
				plan.Target = r
			}
		case !r.Empty:
			plan.Blocked = append(plan.Blocked, fmt.Sprintf("%s: holds etcd data that is not valid: %s", r.Claim, r.Problem))
		}
	}
	if plan.Target != nil {
		target := *plan.Target
		plan.Target = &target
		plan.Preserve = target.Revision > backupRevision
	}
	return plan
}

// BackupRevision is the newest revision the backup store is known to hold: the higher of the full and
// the delta snapshot leases' holder identities, which the backup leader (and the compaction Job) set
// to the revision of a snapshot after uploading it, so they never name a revision the store lacks. 0 when
// neither names one.
func BackupRevision(leases health.SnapshotLeases) int64 {
	var newest int64
	for _, l := range []*coordinationv1.Lease{leases.Full, leases.Delta} {
		if l == nil || l.Spec.HolderIdentity == nil {
			continue
		}
		if rev, err := strconv.ParseInt(strings.TrimSpace(*l.Spec.HolderIdentity), 10, 64); err == nil && rev > newest {
			newest = rev
		}
	}
	return newest
}
