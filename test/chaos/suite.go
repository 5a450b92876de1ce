package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
)

// Names of the suite's objects.
const (
	// Namespace is the shoot namespace of the suite's etcd-main.
	Namespace = "shoot--chaos--main"
	// KeyPrefix is where the writer writes.
	KeyPrefix = "/chaos/"
	// members is etcd-main's size: one member may fail and the cluster keeps its quorum.
	members = 3
	// deltaSnapshotPeriod is etcd-main's delta period: short, so that a store outage shows in BackupReady
	// (three periods without a snapshot) within a round, and the backup is never far behind.
	deltaSnapshotPeriod = 10 * time.Second
	// waitTimeout bounds one wait of the suite (the cluster Ready again, a container restarted).
	waitTimeout = 8 * time.Minute
)

// Suite is a running local seed with druid, the backup extension and a three-member etcd-main under a
// writer, and what the rounds need to disturb it.
type Suite struct {
	Seed   *localseed.Seed
	Env    *seedworkflow.Env
	Writer *seedworkflow.Writer
	// ctr is containerd's client binary (`make tools`).
	ctr string
	out io.Writer

	// bg is what runs besides the faults (background.go); windows the spans it is judged against.
	bg          Background
	windows     disturbances
	compactions *compactionWatch
	// s3User is the store user the shoot's backups use now ("" on the store's root keys); rotations
	// counts the users issued so far.
	s3User    string
	rotations int
}

// Start starts the seed in stateDir (short: the kubelets keep unix sockets below it) from the binaries of
// localseed.DefaultBinDir (the caller points it at a BuildBinDir directory), bootstraps druid and the
// extension, deploys etcd-main with three members backed up to the seed's S3 server and starts the writer
// and the watch of compaction Jobs. bg is what runs besides the faults: with rotations the shoot's backups
// start on a store user of their own, with a compaction threshold etcd-main gets it. On error the seed is
// stopped again.
func Start(ctx context.Context, stateDir string, out io.Writer, log logr.Logger, bg Background) (*Suite, error) {
	ctr, err := childproc.FindBinary("ctr", "CTR_BIN")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", seedworkflow.ErrToolsMissing, err)
	}
	s := &Suite{ctr: ctr, out: out, bg: bg}
	step := func(name string, fn func() error) error {
		begin := time.Now()
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(out, "DURATION %s: %s\n", name, time.Since(begin).Round(100*time.Millisecond))
		return nil
	}
	if err := step("start the local seed", func() error {
		s.Seed, err = seedworkflow.StartSeed(ctx, seedworkflow.Options{StateDir: stateDir, Nodes: members, Log: log})
		return err
	}); err != nil {
		return nil, err
	}
	err = step("bootstrap druid and the extension, deploy a 3-member etcd-main", func() error { return s.deploy(ctx) })
	if err != nil {
		return nil, errors.Join(err, s.Stop(context.WithoutCancel(ctx)))
	}
	s.Writer = seedworkflow.StartWriter(ctx, s.Env, etcd.RoleMain, KeyPrefix)
	s.compactions = s.startCompactionWatch(ctx)
	return s, nil
}

func (s *Suite) deploy(ctx context.Context) error {
	env, err := seedworkflow.NewEnv(s.Seed, waitTimeout)
	if err != nil {
		return err
	}
	s.Env = env
	if _, err := seedworkflow.BootstrapDruid(ctx, env); err != nil {
		return err
	}
	if _, err := seedworkflow.BootstrapBackupExtension(ctx, env); err != nil {
		return err
	}
	env.Namespace, env.DeltaSnapshotPeriod = Namespace, deltaSnapshotPeriod
	if _, err := seedworkflow.CreateShoot(ctx, env); err != nil {
		return err
	}
	if s.bg.RotateEvery > 0 {
		if _, err := s.useNewS3User(ctx); err != nil {
			return fmt.Errorf("moving the shoot's backups to a store user of their own: %w", err)
		}
	}
	c := etcd.New(env.Client, env.Namespace, etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To(int32(members)), HighAvailability: true,
		BackupConfig: &etcd.BackupConfig{BackupEntryName: env.BackupEntryName}, DeltaSnapshotPeriod: env.DeltaSnapshotPeriod,
		WaitTimeout: env.Timeout, WaitInterval: env.Interval})
	if err := c.Deploy(ctx); err != nil {
		return err
	}
	if s.bg.CompactionEventsThreshold > 0 {
		if err := s.setCompactionThreshold(ctx, s.bg.CompactionEventsThreshold); err != nil {
			return err
		}
	}
	if err := c.Wait(ctx); err != nil {
		return err
	}
	return seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, members, true)
}

// Stop stops the writer, the compaction watch and the seed.
func (s *Suite) Stop(ctx context.Context) error {
	if s.Writer != nil {
		s.Writer.Stop()
	}
	if s.compactions != nil {
		s.compactions.stop()
	}
	if s.Seed == nil {
		return nil
	}
	return s.Seed.Stop(ctx)
}

// NewRand is the random source of a run: the same seed gives the same rounds, targets and moments.
func NewRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
