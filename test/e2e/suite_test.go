//go:build e2e

// Package e2e runs the whole stack on one local seed: etcd-druid and the backup extension as pods, Etcds
// deployed through the Gardener-side component, members running on the seed's nodes (kubelet, containerd, runc) and
// backed up to the seed's S3 server. Every scenario gets its own shoot namespace on the one seed, and
// prints its duration as `DURATION <scenario>: <d>`; the suite prints them all again at the end.
//
// It needs root and the tools of `make tools`, takes tens of minutes, and is built only with the e2e tag:
// `make e2e`.
package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/test/support/localseedtest"
)

// Time limits of the suite's waits.
const (
	// waitTimeout bounds one wait of a scenario (a member joining, a recovery, a condition turning).
	waitTimeout = 6 * time.Minute
	// pollInterval is how often the waits look.
	pollInterval = time.Second
)

var (
	// seed is the one local seed of the suite; base is its Env with druid and the extension bootstrapped.
	seed *localseed.Seed
	base *seedworkflow.Env
	// seedLog receives the seed's structured logs; it outlives the seed for a post-mortem.
	seedLog *os.File
)

// TestE2E skips (never fails) without root or the tools of `make tools`, and under -short.
func TestE2E(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	// The seed runs the project's images built from this checkout, never stale ones in bin/images.
	binDir := t.TempDir()
	if err := seedworkflow.BuildBinDir(t.Context(), binDir); errors.Is(err, seedworkflow.ErrToolsMissing) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	t.Setenv(localseed.BinDirEnv, binDir)
	// controller-runtime's clients log through the global logger; without one they print a warning.
	logf.SetLogger(logr.Discard())
	RegisterFailHandler(Fail)
	RunSpecs(t, "e2e on the local seed")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	seedLog, err = os.CreateTemp("", "gardener-etcd-e2e-seed-*.log")
	Expect(err).NotTo(HaveOccurred())
	fmt.Fprintf(GinkgoWriter, "seed log: %s\n", seedLog.Name())
	// Four nodes: a 3-member etcd spreads over nodes with minDomains 3, so the member relocation needs a
	// fourth node for the replacement of a member whose node is lost.
	measure("start the local seed", func() {
		seed, err = seedworkflow.StartSeed(ctx, seedworkflow.Options{Nodes: 4, NetworkPolicies: true, Log: fileLogger(seedLog)})
		Expect(err).NotTo(HaveOccurred())
	})
	base, err = seedworkflow.NewEnv(seed, waitTimeout)
	Expect(err).NotTo(HaveOccurred())
	base.Interval = pollInterval
	measure("bootstrap etcd-druid and the backup extension", func() {
		_, err := seedworkflow.BootstrapDruid(ctx, base)
		Expect(err).NotTo(HaveOccurred())
		_, err = seedworkflow.BootstrapBackupExtension(ctx, base)
		Expect(err).NotTo(HaveOccurred())
	})
}, NodeTimeout(10*time.Minute))

// AfterSuite stops the seed and requires that nothing of it is left: processes, network namespaces,
// links, mounts, the state directory. The pods' logs are kept first when a spec failed.
var _ = AfterSuite(func(ctx SpecContext) {
	if seed == nil {
		return
	}
	stateDir, prefix := seed.StateDir(), seed.Prefix()
	if suiteFailed() {
		keepLogs(stateDir, seed.LogDirs())
	}
	measure("stop the local seed", func() {
		Expect(seed.Stop(ctx)).To(Succeed())
	})
	Expect(localseed.Leftovers(stateDir, prefix)).To(BeEmpty(), "the local seed left something behind")
	if seedLog != nil {
		_ = seedLog.Close()
		if !suiteFailed() {
			_ = os.Remove(seedLog.Name())
		}
	}
}, NodeTimeout(5*time.Minute))

// ReportAfterSuite repeats every DURATION line and each spec's outcome, so that one place of the output
// has the figures.
var _ = ReportAfterSuite("durations", func(report Report) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n==== e2e summary (suite %s) ====\n", report.RunTime.Round(time.Second))
	for _, spec := range report.SpecReports {
		for _, entry := range spec.ReportEntries {
			if strings.HasPrefix(entry.Name, "DURATION ") {
				fmt.Fprintf(&b, "%s: %s\n", entry.Name, entry.StringRepresentation())
			}
		}
		if spec.LeafNodeType == types.NodeTypeIt && spec.State != types.SpecStateSkipped {
			fmt.Fprintf(&b, "SPEC %s: %s in %s\n", spec.FullText(), spec.State, spec.RunTime.Round(time.Second))
		}
	}
	fmt.Print(b.String())
	fmt.Print(recoverySummary(report))
})

// measure runs fn and reports its duration as `DURATION <name>: <d>`.
func measure(name string, fn func()) time.Duration {
	begin := time.Now()
	fn()
	took := time.Since(begin).Round(100 * time.Millisecond)
	fmt.Fprintf(GinkgoWriter, "DURATION %s: %s\n", name, took)
	AddReportEntry("DURATION "+name, took.String(), ReportEntryVisibilityNever)
	return took
}

func suiteFailed() bool { return failedSpecs > 0 }

// failedSpecs counts the specs that failed so far (ReportAfterEach), for AfterSuite's post-mortem.
var failedSpecs int

var _ = ReportAfterEach(func(report SpecReport) {
	if report.Failed() {
		failedSpecs++
	}
})

// keepLogs copies the pods' and the control plane's logs out of the state directory before Stop removes
// it, and says where they are.
func keepLogs(stateDir string, dirs []string) {
	dst, err := os.MkdirTemp("", "gardener-etcd-e2e-logs-")
	if err != nil {
		return
	}
	for _, src := range dirs {
		copyLogs(stateDir, src, dst)
	}
	fmt.Fprintf(GinkgoWriter, "logs of the failed run kept in %s\n", dst)
}

// copyLogs copies the files below src into dst, at their paths relative to stateDir.
func copyLogs(stateDir, src, dst string) {
	_ = filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(stateDir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		target := filepath.Join(dst, rel)
		_ = os.MkdirAll(filepath.Dir(target), 0o755)
		_ = os.WriteFile(target, data, 0o644)
		return nil
	})
}

// fileLogger writes the seed's logs as lines into f.
func fileLogger(f *os.File) logr.Logger {
	return funcr.New(func(prefix, args string) {
		fmt.Fprintf(f, "%s %s %s\n", time.Now().Format("15:04:05.000"), prefix, args)
	}, funcr.Options{Verbosity: 0})
}
