//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// recoveryLabel marks the specs whose fault and recovery `make bench-recovery` reports: each records one
// line per scenario with recordRecovery, and the suite prints them together at the end.
const recoveryLabel = "recovery"

// recoveryEntry is the prefix of the report entries recordRecovery adds.
const recoveryEntry = "RECOVERY "

// recordRecovery reports one recovery scenario: took from the fault until the spec's recovered state
// (the cluster serving every member again), the writes acknowledged by the writer across it and how many
// of them a member misses afterwards (lostWrites). The spec asserts lost == 0 itself; the line is
// recorded first so that a failure shows its figure too.
func recordRecovery(scenario string, took time.Duration, acked, lost int) {
	line := fmt.Sprintf("recovery %s: %.1f s, acknowledged %d, lost %d", scenario, took.Seconds(), acked, lost)
	fmt.Fprintln(GinkgoWriter, strings.ToUpper(line[:1])+line[1:])
	AddReportEntry(recoveryEntry+scenario, line, ReportEntryVisibilityNever)
}

// lostWrites is the largest number of the acknowledged keys any member misses.
func lostWrites(ctx context.Context, env *seedworkflow.Env, role, prefix string, acked []string) int {
	perMember, err := seedworkflow.KeysPerMember(ctx, env, role, prefix)
	Expect(err).NotTo(HaveOccurred())
	lost := 0
	for _, keys := range perMember {
		lost = max(lost, len(seedworkflow.MissingKeys(keys, acked)))
	}
	return lost
}

// recoveryUnderWriter runs fault (which injects the fault and waits for the recovery) under a writer of
// keys below prefix on etcd-main: the writer has acknowledged writes before the fault, and 20 more after
// it; the scenario's figure is recorded and every acknowledged write must be on each of the members.
func recoveryUnderWriter(ctx context.Context, env *seedworkflow.Env, scenario, measured, prefix string, members int, fault func()) {
	w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, prefix)
	Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 10))
	took := measure(measured, fault)
	acksAfter := w.AckedCount() + 20
	Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfter))
	acked, failures, gap := w.Stop()
	fmt.Fprintf(GinkgoWriter, "writer (%s): %d acknowledged, %d failed attempts, longest gap %s\n", scenario, len(acked), failures, gap)
	recordRecovery(scenario, took, len(acked), lostWrites(ctx, env, etcd.RoleMain, prefix, acked))
	expectKeysOnEveryMember(ctx, env, etcd.RoleMain, prefix, members, acked)
}

// recoverySummary is the block of recovery lines of a run, "" without any.
func recoverySummary(report Report) string {
	var b strings.Builder
	for _, spec := range report.SpecReports {
		if spec.LeafNodeType != types.NodeTypeIt {
			continue
		}
		for _, entry := range spec.ReportEntries {
			if strings.HasPrefix(entry.Name, recoveryEntry) {
				fmt.Fprintln(&b, entry.StringRepresentation())
			}
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n==== recovery (make bench-recovery) ====\n" + b.String()
}
