package initializer

import (
	"fmt"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
)

// checkDataVersion refuses, before any decision, a data directory no older etcd can step to a version
// the etcd of this build opens. Data that older etcds step is left to the wrapper, which runs them on it
// as this member before it starts this etcd, or refuses it (and starts nothing) when it has no such
// binaries; the decisions that open the data with this etcd in the sidecar's process (the WAL replay)
// refuse it themselves.
func (i *Initializer) checkDataVersion() error {
	v, ok := etcddata.InspectDataVersion(i.opts.DataDir)
	if !ok {
		return nil
	}
	steps, err := v.StepVersions()
	if err != nil {
		return fmt.Errorf("%s: %w", i.opts.DataDir, err)
	}
	if len(steps) > 0 {
		i.log.Info("An older etcd wrote the data directory: the etcd wrapper steps it through older etcd versions before it starts this one",
			"steps", steps, "reason", v.Unopenable(), "storageVersion", v.StorageVersion)
	}
	return nil
}
