package webhook

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/test/support/hostile"
)

// TestHostileObjectSweep sends each row of hostile.Etcds, hostile.CopyTasks and hostile.OpsTasks through the
// apiserver with druid's validation webhook registered: what would harm a node, a member or a running
// cluster is refused naming the field, what is odd but harmless is admitted with a warning. The Etcds in
// the shapes gardenlet writes (gardenerEtcds) must be admitted.
func TestHostileObjectSweep(t *testing.T) {
	c, warnings := warningClient(t)

	t.Run("Etcd", func(t *testing.T) {
		runSweep(t, c, warnings, exampleEtcd(t), hostile.Etcds)
	})
	t.Run("EtcdCopyBackupsTask", func(t *testing.T) {
		runSweep(t, c, warnings, hostile.CopyTask(env.CreateNamespace(t)), hostile.CopyTasks)
	})
	t.Run("EtcdOpsTask", func(t *testing.T) {
		runSweep(t, c, warnings, hostile.OpsTask(env.CreateNamespace(t)), hostile.OpsTasks)
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
	if n := len(hostile.Etcds) + len(hostile.CopyTasks) + len(hostile.OpsTasks); n < 100 {
		t.Errorf("the sweep has %d rows; it is meant to cover at least 100 hostile objects", n)
	}
}
