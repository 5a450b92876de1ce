package chaos

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Plan is the order of a run's faults, drawn from rng: every fault once in a random order (so a run of at
// least len(faults) rounds covers each), then quick faults at random; a long fault (Long) gets one round.
func Plan(faults []Fault, rounds int, seed uint64) []Fault {
	rng := NewRand(seed)
	order := make([]Fault, len(faults))
	copy(order, faults)
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var quick []Fault
	for _, f := range faults {
		if !Long(f) {
			quick = append(quick, f)
		}
	}
	for len(order) < rounds && len(quick) > 0 {
		order = append(order, quick[rng.IntN(len(quick))])
	}
	return order[:min(rounds, len(order))]
}

// Run runs the planned rounds, printing each result as it comes, with the credential rotations of the
// run's Background between them. It goes on after a failed round while the cluster still became Ready
// (every round checks all writes acknowledged so far again), and stops when it did not: the next round
// would not start from a working cluster. Targets and moments are drawn from the run's seed too.
func (s *Suite) Run(ctx context.Context, plan []Fault, seed uint64) []Result {
	rng := NewRand(seed + 1)
	var results []Result
	rotated := 0
	for i, f := range plan {
		fmt.Fprintf(s.out, "round %d/%d: %s\n", i+1, len(plan), f.Name)
		res := s.RunRound(ctx, i+1, f, rng)
		results = append(results, res)
		fmt.Fprintf(s.out, "  %s\n", resultLine(res))
		if res.Unready || ctx.Err() != nil {
			break
		}
		if s.bg.rotateAfter(i+1, len(plan), rotated) {
			fmt.Fprintf(s.out, "after round %d: %s\n", i+1, rotationFault)
			res := s.RotateCredentials(ctx, i+1)
			rotated++
			results = append(results, res)
			fmt.Fprintf(s.out, "  %s\n", resultLine(res))
			if res.Unready || ctx.Err() != nil {
				break
			}
		}
	}
	if j := s.compactions.current(); j != nil {
		fmt.Fprintf(s.out, "compaction Job %s still running at the end (created %s)\n", shortUID(j.UID), j.Created.Format("15:04:05"))
	}
	return results
}

func resultLine(r Result) string {
	line := fmt.Sprintf("target %s, fault %s, %d acknowledged (%d in total), %d lost, Ready after %s; recoveries: %s",
		r.Target, r.FaultFor.Round(100*time.Millisecond), r.Acked, r.TotalAcked, r.Lost, r.ToReady.Round(100*time.Millisecond), recoveries(r))
	for _, t := range r.OpsTasks {
		line += "; ops task " + t.String()
	}
	for _, j := range r.Compactions {
		line += "; compaction " + j.String()
	}
	if len(r.Notes) > 0 {
		line += "; " + strings.Join(r.Notes, "; ")
	}
	if r.Err != nil {
		line += "; FAILED: " + r.Err.Error()
	}
	return line
}

func recoveries(r Result) string {
	if len(r.Recoveries) == 0 {
		return "none"
	}
	return strings.Join(r.Recoveries, ", ")
}

// PrintTable prints one line per round: round, fault, target, writes acknowledged during the round and in
// total (each checked on every member), writes lost, time to Ready, the round's EtcdOpsTasks and the
// compaction Jobs that finished in it, the automatic recoveries; a credential rotation is a line "after N"
// of its own (its TO READY is the time from the revocation until a snapshot stored with the new keys). Below
// the table: the run's background in totals, with every task and Job that did not succeed.
func PrintTable(w io.Writer, seed uint64, results []Result) {
	fmt.Fprintf(w, "\n==== chaos: %d rounds, CHAOS_SEED=%d ====\n", rounds(results), seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND\tFAULT\tTARGET\tFAULT FOR\tACKED\tACKED TOTAL\tLOST\tTO READY\tOPS TASKS\tCOMPACTIONS\tRECOVERIES\tOUTCOME")
	lost, acked := 0, 0
	for _, r := range results {
		outcome := "ok"
		if r.Err != nil {
			outcome = "FAILED"
		}
		round := fmt.Sprint(r.Round)
		if r.Between {
			round = fmt.Sprintf("after %d", r.Round)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", round, r.Fault, r.Target, r.FaultFor.Round(time.Second),
			r.Acked, r.TotalAcked, r.Lost, r.ToReady.Round(100*time.Millisecond), opsTaskSummary(r.OpsTasks), compactionSummary(r.Compactions),
			recoveries(r), outcome)
		lost += r.Lost
		acked = max(acked, r.TotalAcked)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "acknowledged writes: %d, lost: %d\n", acked, lost)
	printBackground(w, results)
}

// rounds counts the fault rounds (not the rotations between them).
func rounds(results []Result) int {
	n := 0
	for _, r := range results {
		if !r.Between {
			n++
		}
	}
	return n
}

// printBackground sums up the run's EtcdOpsTasks, compaction Jobs and credential rotations, listing each
// task and Job that did not succeed with its round and reason.
func printBackground(w io.Writer, results []Result) {
	var tasks, jobs int
	taskStates, jobOutcomes := map[string]int{}, map[string]int{}
	var unusual []string
	var rotations []string
	for _, r := range results {
		where := fmt.Sprintf("round %d (%s)", r.Round, r.Fault)
		if r.Between {
			where = fmt.Sprintf("after round %d (%s)", r.Round, r.Fault)
			outcome := "ok"
			if r.Err != nil {
				outcome = "FAILED"
			}
			rotations = append(rotations, fmt.Sprintf("after round %d: %s, %s", r.Round, r.Target, outcome))
		}
		for _, t := range r.OpsTasks {
			tasks++
			k := string(t.State)
			if k == "" {
				k = "no final state"
			}
			if t.DuringFault {
				k += " during a fault"
			}
			taskStates[k]++
			if t.State != "Succeeded" {
				unusual = append(unusual, fmt.Sprintf("%s: ops task %s", where, t))
			}
		}
		for _, j := range r.Compactions {
			jobs++
			jobOutcomes[j.Outcome]++
			if j.Outcome != jobSucceeded {
				unusual = append(unusual, fmt.Sprintf("%s: compaction %s", where, j))
			}
		}
	}
	fmt.Fprintf(w, "ops tasks: %d (%s)\n", tasks, counted(taskStates))
	fmt.Fprintf(w, "compaction Jobs: %d (%s)\n", jobs, counted(jobOutcomes))
	fmt.Fprintf(w, "credential rotations: %d", len(rotations))
	if len(rotations) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(rotations, "; "))
	}
	fmt.Fprintln(w)
	for _, u := range unusual {
		fmt.Fprintf(w, "  %s\n", u)
	}
}

// counted is "Succeeded 12, Failed during a fault 1" in a stable order.
func counted(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
