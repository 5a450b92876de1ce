package pod

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/test/support/oldetcd"
)

// A member whose sidecar restores only what etcd 3.5 and older write (druid passes --hold-etcd-version=3.5
// for upstream etcd-backup-restore) runs etcd 3.5 from the image for good: it serves, its snapshots carry
// no storage version (what etcd 3.4's storage package, upstream's restorer, accepts), and it comes back on
// 3.5 with every key after a restart — never stepped up to this build's etcd.
func TestHeldMemberRunsEtcd35AndItsSnapshotsStayRestorableByUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an old etcd binary")
	}
	g := NewWithT(t)
	m := oldetcd.NewMember(t, filepath.Join(t.TempDir(), "data"))
	m.Name = "etcd-main-0"
	p := newStepPod(t, []oldetcd.Member{m}, 0)
	p.opts.HoldVersion = "3.5"
	p.start(0)
	waitReadyOn(g, p, m, "3.5.")
	oldetcd.Put(t, m, 0, 20)

	snapshot := filepath.Join(t.TempDir(), "snapshot.db")
	saveSnapshot(t, m, snapshot)
	db, err := etcddata.ReadDB(snapshot)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(db.StorageVersion).To(BeEmpty(), "etcd 3.4's storage package refuses any storage version newer than 3.5")

	p.stop()
	v, ok := etcddata.InspectDataVersion(m.DataDir)
	g.Expect(ok).To(BeTrue())
	g.Expect(v.WrittenBy35OrOlder()).To(BeTrue(), "data version after the held run: %+v", v)

	p.start(0)
	waitReadyOn(g, p, m, "3.5.")
	g.Expect(servedKeys(t, m)).To(Equal(int64(20)))
	g.Expect(p.restarts()).To(BeZero())
}

// Data that this build's etcd wrote is never run under the held older etcd (etcd does not downgrade): the
// member runs this build's etcd and serves every key, without a crash loop.
func TestHoldNeverRunsAnOlderEtcdOnNewerData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an old etcd binary")
	}
	g := NewWithT(t)
	m := oldetcd.NewMember(t, filepath.Join(t.TempDir(), "data"))
	m.Name = "etcd-main-0"
	p := newStepPod(t, []oldetcd.Member{m}, 0)
	p.start(0)
	waitReadyOn(g, p, m, "3.7.")
	oldetcd.Put(t, m, 0, 20)
	p.stop()
	before, ok := etcddata.InspectDataVersion(m.DataDir)
	g.Expect(ok).To(BeTrue())
	g.Expect(before.WrittenBy35OrOlder()).To(BeFalse(), "data version of this build's etcd: %+v", before)

	p.opts.HoldVersion = "3.5"
	p.start(0)
	waitReadyOn(g, p, m, "3.7.")
	g.Expect(servedKeys(t, m)).To(Equal(int64(20)))
	g.Expect(p.restarts()).To(BeZero())
}

// waitReadyOn waits until the pod's wrapper is ready with member m serving etcd of versionPrefix; an exit of
// the wrapper (a restart in a pod) fails at once.
func waitReadyOn(g Gomega, p *stepPod, m oldetcd.Member, versionPrefix string) {
	g.Eventually(func() int {
		if p.restarts() > 0 {
			StopTrying("the wrapper exited: in a pod, a crash loop").Now()
		}
		return p.readyz()
	}, 2*time.Minute, 100*time.Millisecond).Should(Equal(http.StatusOK))
	g.Expect(serverVersion(p.t, m)).To(HavePrefix(versionPrefix))
}

// saveSnapshot writes the member's snapshot (etcd's Maintenance.Snapshot, as every sidecar takes a full
// snapshot) to path.
func saveSnapshot(t *testing.T, m oldetcd.Member, path string) {
	t.Helper()
	rc, err := oldetcd.Client(t, m).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadFrom(rc); err != nil {
		t.Fatal(err)
	}
}
