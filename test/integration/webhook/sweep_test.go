package webhook

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
)

// TestHostileObjectSweep sends each row of hostileEtcds, hostileCopyTasks and hostileOpsTasks through the
// apiserver with druid's validation webhook registered: what would harm a node, a member or a running
// cluster is refused naming the field, what is odd but harmless is admitted with a warning. The Etcds in
// the shapes gardenlet writes (gardenerEtcds) must be admitted.
func TestHostileObjectSweep(t *testing.T) {
	c, warnings := warningClient(t)

	t.Run("Etcd", func(t *testing.T) {
		runSweep(t, c, warnings, exampleEtcd(t), hostileEtcds)
	})
	t.Run("EtcdCopyBackupsTask", func(t *testing.T) {
		runSweep(t, c, warnings, sweepCopyTask(env.CreateNamespace(t)), hostileCopyTasks)
	})
	t.Run("EtcdOpsTask", func(t *testing.T) {
		runSweep(t, c, warnings, sweepOpsTask(env.CreateNamespace(t)), hostileOpsTasks)
	})
	t.Run("Gardener's shapes are admitted", func(t *testing.T) {
		for name, manifest := range gardenerEtcds {
			t.Run(name, func(t *testing.T) {
				g := NewWithT(t)
				etcd := unstructuredFromYAML(t, manifest)
				etcd.SetNamespace(env.CreateNamespace(t))
				g.Expect(c.Create(context.Background(), etcd)).To(Succeed())
			})
		}
	})
	if n := len(hostileEtcds) + len(hostileCopyTasks) + len(hostileOpsTasks); n < 100 {
		t.Errorf("the sweep has %d rows; it is meant to cover at least 100 hostile objects", n)
	}
}
