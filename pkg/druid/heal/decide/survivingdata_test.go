package decide

import (
	"testing"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

func read(claim string, rev int64) VolumeReading {
	return VolumeReading{Claim: claim, State: ReadingDone, Revision: rev, Valid: true}
}

func empty(claim string) VolumeReading {
	return VolumeReading{Claim: claim, State: ReadingDone, Empty: true, Problem: "holds no member directory"}
}

// Step 3's decision: the most advanced valid volume is the target, preserved only when it is ahead of the
// backup; a volume that could not be read, or holds data that is not valid, blocks; the plan is ready
// only when every volume was read and none blocks.
func TestPlanSurvivingData(t *testing.T) {
	for name, c := range map[string]struct {
		readings     []VolumeReading
		backup       int64
		wantTarget   string
		wantRevision int64
		wantPreserve bool
		wantBlocked  []string
		wantPending  []string
		wantReady    bool
		wantNoTarget bool
	}{
		"survivor ahead of the backup is preserved": {
			readings:   []VolumeReading{read("v-0", 150), read("v-1", 110), empty("v-2")},
			backup:     120,
			wantTarget: "v-0", wantRevision: 150, wantPreserve: true, wantReady: true,
		},
		"backup ahead of every volume: nothing to upload": {
			readings:   []VolumeReading{read("v-0", 150), read("v-1", 190)},
			backup:     200,
			wantTarget: "v-1", wantRevision: 190, wantReady: true,
		},
		"backup at the volume's revision: nothing to upload": {
			readings:   []VolumeReading{read("v-0", 200)},
			backup:     200,
			wantTarget: "v-0", wantRevision: 200, wantReady: true,
		},
		"unknown backup revision: preserve": {
			readings:   []VolumeReading{read("v-0", 5)},
			wantTarget: "v-0", wantRevision: 5, wantPreserve: true, wantReady: true,
		},
		"equal revisions: the lowest claim name, whatever the order": {
			readings:   []VolumeReading{read("v-2", 150), read("v-0", 150), read("v-1", 150)},
			backup:     100,
			wantTarget: "v-0", wantRevision: 150, wantPreserve: true, wantReady: true,
		},
		"every volume empty: nothing to save, ready": {
			readings:     []VolumeReading{empty("v-0"), empty("v-1")},
			backup:       100,
			wantNoTarget: true, wantReady: true,
		},
		"no volume at all: ready": {
			wantNoTarget: true, wantReady: true,
		},
		"a pending volume keeps the plan waiting": {
			readings:   []VolumeReading{read("v-0", 150), {Claim: "v-1"}},
			backup:     100,
			wantTarget: "v-0", wantRevision: 150, wantPreserve: true,
			wantPending: []string{"v-1"},
		},
		"a failed reading blocks": {
			readings:   []VolumeReading{read("v-0", 150), {Claim: "v-1", State: ReadingFailed, Problem: "permission denied"}},
			backup:     100,
			wantTarget: "v-0", wantRevision: 150, wantPreserve: true,
			wantBlocked: []string{"v-1: cannot be read: permission denied"},
		},
		"moved-aside data dirs block, even on an empty volume": {
			readings: []VolumeReading{read("v-0", 150), {Claim: "v-1", State: ReadingDone, Empty: true,
				MovedAside: []string{"/var/etcd/data/new.etcd.invalid-20260102T150405Z"}}},
			backup:     100,
			wantTarget: "v-0", wantRevision: 150, wantPreserve: true,
			wantBlocked: []string{"v-1: keeps data dirs moved aside by the initializer (/var/etcd/data/new.etcd.invalid-20260102T150405Z): " +
				"save what they hold and remove them, then delete the volume's data-revision Job to read it again"},
		},
		"invalid data that is not empty blocks": {
			readings:   []VolumeReading{read("v-0", 150), {Claim: "v-1", State: ReadingDone, Problem: "database: corrupt"}},
			backup:     100,
			wantTarget: "v-0", wantRevision: 150, wantPreserve: true,
			wantBlocked: []string{"v-1: holds etcd data that is not valid: database: corrupt"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			plan := PlanSurvivingData(c.readings, c.backup)
			g.Expect(plan.Ready()).To(Equal(c.wantReady))
			g.Expect(plan.Blocked).To(Equal(c.wantBlocked))
			g.Expect(plan.Pending).To(Equal(c.wantPending))
			g.Expect(plan.Preserve).To(Equal(c.wantPreserve))
			if c.wantNoTarget {
				g.Expect(plan.Target).To(BeNil())
				return
			}
			g.Expect(plan.Target).NotTo(BeNil())
			g.Expect(plan.Target.Claim).To(Equal(c.wantTarget))
			g.Expect(plan.Target.Revision).To(Equal(c.wantRevision))
		})
	}
}

// The backup's revision is the higher of the snapshot leases' holders; leases without one, or with
// something else than a number, count as nothing known.
func TestBackupRevision(t *testing.T) {
	g := NewWithT(t)
	lease := func(holder *string) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: holder}}
	}
	g.Expect(BackupRevision(health.SnapshotLeases{})).To(BeZero())
	g.Expect(BackupRevision(health.SnapshotLeases{Full: lease(nil), Delta: lease(ptr.To(""))})).To(BeZero())
	g.Expect(BackupRevision(health.SnapshotLeases{Full: lease(ptr.To("100")), Delta: lease(ptr.To("120"))})).To(Equal(int64(120)))
	g.Expect(BackupRevision(health.SnapshotLeases{Full: lease(ptr.To("300")), Delta: lease(ptr.To("120"))})).To(Equal(int64(300)))
	g.Expect(BackupRevision(health.SnapshotLeases{Full: lease(ptr.To("garbage")), Delta: lease(ptr.To("7"))})).To(Equal(int64(7)))
}
