package initializer

import (
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// validateDataDir is the upstream sidecar's validation of the data directory, timed as its
// etcdbr_validation_duration_seconds: that no etcd still uses the directory, whether this etcd can open
// the data at all, then the directory's facts (sanity mode: its structure, and if that does not pass what
// full mode checks: the WAL read to its end and the database opened).
//
// The validation does not succeed, as upstream, when an etcd holds the directory's locks, or when the
// data is refused: data that no older etcd steps to a version this etcd opens (a newer storage version)
// is, in both modes, neither started on nor moved aside or restored over. Sanity mode is no
// exception: the clean-exit marker may come from another wrapper.
func (i *Initializer) validateDataDir(mode podwire.InitMode) (data DataFacts, sanityPassed bool, err error) {
	start := time.Now()
	if err := CheckNotInUse(i.opts.DataDir); err != nil {
		i.opts.Metrics.validated(start, false)
		return DataFacts{}, false, err
	}
	if err := i.checkDataVersion(); err != nil {
		i.opts.Metrics.validated(start, false)
		i.log.Error(err, "Refusing the data directory: nothing is started on it, moved or restored over it")
		return DataFacts{}, false, err
	}
	defer i.opts.Metrics.validated(start, true)
	if mode == podwire.InitSanity {
		data = InspectDataDir(i.opts.DataDir, i.opts.Owner, false)
		if data.HasMember && data.DataValid && data.OwnerOK {
			return data, true, nil
		}
		i.log.Info("Sanity check failed, running the full initialization", "problem", data.Problem)
	}
	return InspectDataDir(i.opts.DataDir, i.opts.Owner, true), false, nil
}
