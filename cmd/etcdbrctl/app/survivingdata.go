package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/sidecar"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// SurvivingDataCommands are data-revision and preserve-data, the two one-shot steps druid's quorum-loss
// recovery runs as Jobs on each surviving member volume (mounted read-only) before it deletes any
// volume: how far did this volume get, and save the most advanced one to the store as a full snapshot.
func SurvivingDataCommands() []*cobra.Command {
	rev, _ := newDataRevisionCommand()
	preserve, _ := newPreserveDataCommand()
	return []*cobra.Command{rev, preserve}
}

// dataCopyFlags locate the data directory and the scratch space for its copy, and where the result is
// reported besides stdout: the pod's termination message, which druid reads from the Job's pod status.
type dataCopyFlags struct {
	dataDir, scratchDir, terminationMessagePath string
	// owner is the Etcd ("<namespace>/<name>") the data must belong to (the initializer's owner marker).
	owner string
}

func bindDataCopyFlags(fs *pflag.FlagSet) *dataCopyFlags {
	f := &dataCopyFlags{}
	fs.StringVar(&f.dataDir, podwire.FlagDataDir, sidecar.DefaultOptions().DataDir, "etcd's data directory (only read)")
	fs.StringVar(&f.scratchDir, podwire.FlagScratchDir, "", "directory for the copy of the data the throwaway etcd runs on (required; needs the data's size free)")
	fs.StringVar(&f.terminationMessagePath, podwire.FlagTerminationMessagePath, "/dev/termination-log",
		"file the JSON result is also written to (the pod's termination message); empty: stdout only")
	fs.StringVar(&f.owner, podwire.FlagOwner, "", "the Etcd (<namespace>/<name>) the data must be marked for; data marked for another is not valid. Empty: not checked")
	return f
}

func (f *dataCopyFlags) validate() error {
	if f.dataDir == "" {
		return errors.New("--data-dir is required")
	}
	if f.scratchDir == "" {
		return errors.New("--scratch-dir is required")
	}
	return nil
}

// jobResult is a result of the surviving-data Jobs as podwire encodes it.
type jobResult interface{ Encode() ([]byte, error) }

// report writes the result as one JSON line to stdout and to the termination-message path.
func (f *dataCopyFlags) report(cmd *cobra.Command, r jobResult) error {
	line, err := r.Encode()
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := cmd.OutOrStdout().Write(line); err != nil {
		return err
	}
	if f.terminationMessagePath == "" {
		return nil
	}
	file, err := os.Create(f.terminationMessagePath)
	if err != nil {
		return fmt.Errorf("--termination-message-path: %w", err)
	}
	if _, err := file.Write(line); err != nil {
		_ = file.Close()
		return fmt.Errorf("--termination-message-path: %w", err)
	}
	return file.Close()
}

func newDataRevisionCommand() (*cobra.Command, *dataCopyFlags) {
	var f *dataCopyFlags
	cmd := &cobra.Command{
		Use:   podwire.CommandDataRevision,
		Short: "Print the revision etcd would serve from a data directory, without modifying it",
		Long: "Starts a throwaway etcd on a copy of the data directory (in --scratch-dir), so the WAL is replayed, and\n" +
			"prints {\"revision\":N,\"valid\":true}, {\"revision\":0,\"valid\":false,\"empty\":true,...} for a directory without\n" +
			"member directory, or {\"revision\":0,\"valid\":false,\"reason\":...} for an incomplete or corrupt one. It fails\n" +
			"only when it cannot decide.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			aside := initializer.MovedAside(f.dataDir)
			facts := initializer.InspectDataDir(f.dataDir, f.owner, false)
			if !facts.HasMember {
				return f.report(cmd, podwire.DataRevision{Empty: true, Reason: f.dataDir + " holds no member directory", MovedAside: aside})
			}
			if !facts.OwnerOK {
				return f.report(cmd, podwire.DataRevision{Reason: f.dataDir + ": " + facts.Problem + " than " + f.owner, MovedAside: aside})
			}
			data, err := initializer.StartOnCopy(cmd.Context(), f.dataDir, f.scratchDir)
			if errors.Is(err, initializer.ErrNoValidData) {
				return f.report(cmd, podwire.DataRevision{Reason: err.Error(), MovedAside: aside})
			}
			if err != nil {
				return err
			}
			rev := data.Revision()
			if err := data.Close(); err != nil {
				return fmt.Errorf("removing the copy: %w", err)
			}
			return f.report(cmd, podwire.DataRevision{Revision: rev, Valid: true, MovedAside: aside})
		},
	}
	f = bindDataCopyFlags(cmd.Flags())
	return cmd, f
}

// preserveDataOptions are the flags of preserve-data: the data, the store and compression flags the
// sidecar takes (so the snapshot is named and stored as the backup leader's), and the revision druid
// chose.
type preserveDataOptions struct {
	data           *dataCopyFlags
	store          snapstore.Config
	storeFlags     *storeflags.Store
	compression    *storeflags.Compression
	expectRevision int64
	timeout        time.Duration
}

func newPreserveDataCommand() (*cobra.Command, *preserveDataOptions) {
	o := &preserveDataOptions{}
	cmd := &cobra.Command{
		Use:   podwire.CommandPreserveData,
		Short: "Upload a full snapshot of a data directory to the store, unless one at its revision is there",
		Long: "Takes a full snapshot from a throwaway etcd on a copy of the data directory (in --scratch-dir; the data\n" +
			"directory is only read), refuses when its revision is not --expect-revision, and uploads it as the newest\n" +
			"full snapshot unless the store already holds a full snapshot at or above that revision.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fs := cmd.Flags()
	o.data = bindDataCopyFlags(fs)
	o.storeFlags = storeflags.Bind(fs, &o.store, "", "")
	o.compression = storeflags.BindCompression(fs)
	fs.Int64Var(&o.expectRevision, podwire.FlagExpectRevision, 0, "the revision the data directory must hold (required; from data-revision)")
	fs.DurationVar(&o.timeout, podwire.FlagEtcdSnapshotTimeout, 15*time.Minute, "timeout of taking and uploading the snapshot")
	return cmd, o
}

func (o *preserveDataOptions) run(cmd *cobra.Command) error {
	if err := o.data.validate(); err != nil {
		return err
	}
	if o.expectRevision <= 0 {
		return errors.New("--expect-revision is required and must be positive")
	}
	if facts := initializer.InspectDataDir(o.data.dataDir, o.data.owner, false); !facts.OwnerOK {
		return fmt.Errorf("not uploading %s as a backup of %s: %s", o.data.dataDir, o.data.owner, facts.Problem)
	}
	compression, err := o.compression.Compression()
	if err != nil {
		return err
	}
	log := toolLogger(cmd)
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	data, err := initializer.StartOnCopy(ctx, o.data.dataDir, o.data.scratchDir)
	if err != nil {
		return err
	}
	defer data.Close()
	if rev := data.Revision(); rev != o.expectRevision {
		return fmt.Errorf("%s holds revision %d, not --expect-revision=%d: nothing uploaded", o.data.dataDir, rev, o.expectRevision)
	}
	store, err := openStore(ctx, o.storeFlags, log)
	if err != nil {
		return err
	}
	defer store.Close()
	if have, err := fullSnapshotAtOrAbove(ctx, store, o.expectRevision); err != nil {
		return err
	} else if have != nil {
		log.Info("The store already holds a full snapshot at or above the revision; nothing uploaded", "snapshot", have.SnapName, "revision", o.expectRevision)
		return o.data.report(cmd, podwire.PreservedData{Revision: o.expectRevision, Snapshot: have.SnapName})
	}
	cli, err := data.Client()
	if err != nil {
		return err
	}
	defer cli.Close()
	s, err := snapshotter.New(snapshotter.Options{Config: snapshotter.OneShot(compression), Client: cli, Store: store, Log: log})
	if err != nil {
		return err
	}
	snap, err := s.TakeFull(ctx, false)
	if err != nil {
		return err
	}
	if snap.LastRevision != o.expectRevision {
		return fmt.Errorf("the uploaded snapshot %s holds revision %d, not --expect-revision=%d", snap.SnapName, snap.LastRevision, o.expectRevision)
	}
	return o.data.report(cmd, podwire.PreservedData{Revision: snap.LastRevision, Snapshot: snap.SnapName, Uploaded: true})
}

// fullSnapshotAtOrAbove returns the store's newest full snapshot whose last revision is at least rev,
// or nil.
func fullSnapshotAtOrAbove(ctx context.Context, store snapstore.SnapStore, rev int64) (*snapshot.Snapshot, error) {
	snaps, err := store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the store: %w", err)
	}
	for i := len(snaps) - 1; i >= 0; i-- {
		if snaps[i].Kind == snapshot.KindFull && snaps[i].LastRevision >= rev {
			return snaps[i], nil
		}
	}
	return nil, nil
}
