package wrapper

import (
	"context"
	"fmt"
	"strings"

	"github.com/coreos/go-semver/semver"
	"github.com/go-logr/logr"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
)

// heldVersion is the one minor version the wrapper holds a member at (Options.HoldVersion): the newest
// etcd whose data upstream etcd-backup-restore's restorer opens (it accepts storage versions 3.4 and 3.5).
const heldVersion = "3.5"

// holdPlan returns the older etcd that runs as this member instead of this build's etcd (Options.HoldVersion),
// or why it cannot: etcd does not downgrade, so neither data that a newer etcd wrote nor a cluster of which
// another member runs a newer etcd is ever run under an older one — such a member runs the newest etcd, as
// without the option. An error only when the data directory does not read (then no etcd is started).
func holdPlan(ctx context.Context, cfg *embed.Config, o Options) (s stepEtcd, whyNot string, err error) {
	bin := o.stepBinary(o.HoldVersion)
	if bin == "" {
		return s, fmt.Sprintf("no etcd %s binary is configured (--step-etcd-%s-binary) or in the image (%s)",
			o.HoldVersion, o.HoldVersion, o.ImageStepBinaries[o.HoldVersion]), nil
	}
	v, exists, err := etcddata.ReadDataVersion(cfg.Dir)
	if err != nil {
		return s, "", fmt.Errorf("which etcd may open the data directory is unknown, so none is started: %w", err)
	}
	if exists && !v.WrittenBy35OrOlder() {
		return s, fmt.Sprintf("the data directory may hold what a newer etcd wrote (storage version %q, cluster version %q)",
			v.StorageVersion, v.ClusterVersion), nil
	}
	held := semver.New(o.HoldVersion + ".0")
	if above := membersAbove(ctx, cfg, *held); len(above) > 0 {
		return s, fmt.Sprintf("members %s run a newer etcd", strings.Join(above, ", ")), nil
	}
	return stepEtcd{version: o.HoldVersion, binary: bin}, "", nil
}

// runHeld runs the held etcd as this member until a termination or a stop request, which stop it cleanly
// (nil: a clean exit, as for this build's etcd), or until it exits by itself (an error: the container
// restarts, and the next start decides again).
func (w *wrapper) runHeld(ctx context.Context, s stepEtcd, config []byte, cfg *embed.Config, o Options, log logr.Logger) error {
	log.Info("Running the held etcd version as this member", "version", s.version, "binary", s.binary)
	older, err := startOlderEtcd(s, config, cfg, o, o.stepOutput())
	if err != nil {
		return err
	}
	w.setOlder(older)
	select {
	case <-older.exited:
	case <-ctx.Done():
		log.Info("Stopping the held etcd on termination signal", "version", s.version)
	case <-w.stop:
		log.Info("Stopping the held etcd on request", "version", s.version)
	}
	w.setOlder(nil)
	if err := older.stop(); err != nil {
		return err
	}
	log.Info("The held etcd stopped gracefully", "version", s.version)
	return markCleanExit(o.MarkerDir)
}
