package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/test/support/localseedtest"
)

// startSuite starts the suite on a local seed running the project's images built from this checkout, and
// registers its teardown: the seed stops and must leave nothing behind; a failed test first logs the
// tails of the pods' logs. It skips under -short, without root and without the tools of `make tools`. bg is
// what runs besides the faults.
func startSuite(t *testing.T, ctx context.Context, bg Background) *Suite {
	t.Helper()
	localseedtest.SkipUnlessPossible(t)
	localseedtest.SkipUnlessNodeTools(t, append([]string{"ctr"}, localseed.NodeTools...))
	binDir := t.TempDir()
	if err := seedworkflow.BuildBinDir(ctx, binDir); errors.Is(err, seedworkflow.ErrToolsMissing) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	t.Setenv(localseed.BinDirEnv, binDir)
	// controller-runtime's clients log through the global logger; without one they print a warning.
	logf.SetLogger(logr.Discard())
	// Short: the kubelets keep unix sockets below the state directory.
	stateDir, err := os.MkdirTemp("", "ls-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	seedLog, err := os.CreateTemp("", "chaos-seed-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed log: %s", seedLog.Name())
	s, err := Start(ctx, stateDir, t.Output(), fileLogger(seedLog), bg)
	if err != nil {
		_ = os.RemoveAll(stateDir)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		prefix := s.Seed.Prefix()
		if t.Failed() {
			localseedtest.LogTails(t, filepath.Join(stateDir, "logs", "pods"), 3000)
		}
		begin := time.Now()
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("stopping the seed: %v", err)
		}
		t.Logf("DURATION stop the local seed: %s", time.Since(begin).Round(100*time.Millisecond))
		for _, left := range localseed.Leftovers(stateDir, prefix) {
			t.Errorf("left behind: %s", left)
		}
		_ = seedLog.Close()
		if !t.Failed() {
			_ = os.Remove(seedLog.Name())
		}
	})
	return s
}

// fileLogger writes the seed's logs as lines into f.
func fileLogger(f *os.File) logr.Logger {
	return funcr.New(func(prefix, args string) {
		fmt.Fprintf(f, "%s %s %s\n", time.Now().Format("15:04:05.000"), prefix, args)
	}, funcr.Options{Verbosity: 0})
}

// checkResults fails t for every failed round.
func checkResults(t *testing.T, results []Result) {
	t.Helper()
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("round %d (%s, %s): %v", r.Round, r.Fault, r.Target, r.Err)
		}
		if r.Lost > 0 {
			t.Errorf("round %d (%s): %d acknowledged writes lost", r.Round, r.Fault, r.Lost)
		}
	}
}
