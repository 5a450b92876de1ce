// Package seedworkflow is the whole Gardener ⇄ druid workflow on the local seed, as steps: the toolkit the
// end-to-end suite (test/e2e) builds its scenarios from, one step at a time, and that the
// `gardener-etcd demo` command (`make demo`) runs in order: start the seed, bootstrap etcd-druid and the
// backup extension from their charts as pods, create a shoot namespace with a BackupBucket and BackupEntry on
// the seed's S3 server (their secrets where gardenlet relays them), deploy etcd-main (backed up) and
// etcd-events through pkg/botanist/etcd, write keys over TLS, scale etcd-main to three members with peer TLS,
// and take a full snapshot through the sidecar.
//
// Every step takes an *Env (the seed and its clients) and waits on conditions, never on time.
package seedworkflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/apis"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
	"github.com/gardener-etcd/gardener-etcd/pkg/waitreason"
)

// Names the demo uses in the seed.
const (
	// GardenNamespace holds etcd-druid, the backup extension and the bucket credentials.
	GardenNamespace = "garden"
	// ShootNamespace is the control-plane namespace of the demo shoot.
	ShootNamespace = "shoot--demo--local"
	// BucketName is the BackupBucket (and the S3 bucket) of the demo.
	BucketName = "demo-backups"
	// PriorityClassName is the class botanist gives etcd pods by default; Gardener creates it in every seed.
	PriorityClassName = "gardener-system-500"
	// Region of the BackupBucket and BackupEntry; the seed's S3 server accepts any.
	Region = "us-east-1"
)

// Scheme knows the built-in kinds, CRDs and both project API groups.
var Scheme = apis.NewScheme()

// Env is a running local seed and what the steps share.
type Env struct {
	Seed   *localseed.Seed
	Client client.Client
	// Namespace is the shoot's control-plane namespace.
	Namespace string
	// BackupEntryName is set by CreateShoot.
	BackupEntryName string
	// BucketName is the shoot's BackupBucket (BucketName when empty); a migration's destination uses another
	// bucket, as a seed of its own would.
	BucketName string
	// HighAvailability is the shoot's highly available control plane: both etcds run three members with peer
	// TLS (one otherwise).
	HighAvailability bool
	// WrittenRevision is the revision of WriteData's last write; a later snapshot must cover it.
	WrittenRevision int64
	// DeltaSnapshotPeriod of etcd-main's backups (botanist's default when zero); suites that wait for a delta
	// snapshot or a stale backup shorten it.
	DeltaSnapshotPeriod time.Duration
	// Timeout bounds each wait of a step.
	Timeout time.Duration
	// Interval is how often waits look.
	Interval time.Duration
}

// Bucket is the shoot's BackupBucket.
func (env *Env) Bucket() string {
	if env.BucketName != "" {
		return env.BucketName
	}
	return BucketName
}

// members is the member count of the shoot's etcds.
func (env *Env) members() int32 {
	if env.HighAvailability {
		return 3
	}
	return 1
}

// ShootName is the Shoot's name as gardenlet has it: the last part of the control-plane namespace
// shoot--<project>--<shoot> (Gardener allows no "--" in either name); a namespace of another form is the
// name itself.
func (env *Env) ShootName() string {
	if i := strings.LastIndex(env.Namespace, "--"); i >= 0 {
		return env.Namespace[i+len("--"):]
	}
	return env.Namespace
}

// NewEnv wraps a started seed.
func NewEnv(seed *localseed.Seed, timeout time.Duration) (*Env, error) {
	c, err := client.New(seed.RESTConfig(), client.Options{Scheme: Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating the seed client: %w", err)
	}
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	return &Env{Seed: seed, Client: c, Namespace: ShootNamespace, Timeout: timeout, Interval: time.Second}, nil
}

// StepResult is one finished step of a run.
type StepResult struct {
	Name     string
	Duration time.Duration
	// Detail is a one-line outcome.
	Detail string
}

// Timer runs named steps, printing each as it starts and ends, and keeps their durations for the summary.
type Timer struct {
	Out   io.Writer
	Steps []StepResult
}

// Run runs fn as step name; fn returns a one-line outcome.
func (t *Timer) Run(name string, fn func() (string, error)) error {
	fmt.Fprintf(t.Out, "==> %s ...\n", name)
	begin := time.Now()
	detail, err := fn()
	took := time.Since(begin)
	if err != nil {
		fmt.Fprintf(t.Out, "    FAILED after %s: %v\n", took.Round(100*time.Millisecond), err)
		return fmt.Errorf("%s: %w", name, err)
	}
	t.Steps = append(t.Steps, StepResult{Name: name, Duration: took, Detail: detail})
	if detail != "" {
		fmt.Fprintf(t.Out, "    %s\n", detail)
	}
	fmt.Fprintf(t.Out, "    done in %s\n", took.Round(100*time.Millisecond))
	return nil
}

// poll calls check every env.Interval until it returns "" (done), up to env.Timeout. check returns why it is
// not done yet; read errors are retried. The timeout error carries the last reason.
func poll(ctx context.Context, env *Env, what string, check func(ctx context.Context) (string, error)) error {
	last, err := waitreason.Poll(ctx, env.Interval, env.Timeout, check)
	if errors.Is(err, waitreason.ErrNotDone) {
		return fmt.Errorf("waiting for %s: not done after %s: %s", what, env.Timeout, last)
	}
	return err
}
