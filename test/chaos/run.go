package chaos

import (
	"context"
	"fmt"
	"io"
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

// Run runs the planned rounds, printing each result as it comes. It goes on after a failed round while the
// cluster still became Ready (every round checks all writes acknowledged so far again), and stops when it
// did not: the next round would not start from a working cluster. Targets and moments are drawn from the
// run's seed too.
func (s *Suite) Run(ctx context.Context, plan []Fault, seed uint64) []Result {
	rng := NewRand(seed + 1)
	var results []Result
	for i, f := range plan {
		fmt.Fprintf(s.out, "round %d/%d: %s\n", i+1, len(plan), f.Name)
		res := s.RunRound(ctx, i+1, f, rng)
		results = append(results, res)
		fmt.Fprintf(s.out, "  %s\n", resultLine(res))
		if res.Unready || ctx.Err() != nil {
			break
		}
	}
	return results
}

func resultLine(r Result) string {
	line := fmt.Sprintf("target %s, fault %s, %d acknowledged (%d in total), %d lost, Ready after %s; recoveries: %s",
		r.Target, r.FaultFor.Round(100*time.Millisecond), r.Acked, r.TotalAcked, r.Lost, r.ToReady.Round(100*time.Millisecond), recoveries(r))
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
// total (each checked on every member), writes lost, the automatic recoveries, time to Ready.
func PrintTable(w io.Writer, seed uint64, results []Result) {
	fmt.Fprintf(w, "\n==== chaos: %d rounds, CHAOS_SEED=%d ====\n", len(results), seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND\tFAULT\tTARGET\tFAULT FOR\tACKED\tACKED TOTAL\tLOST\tTO READY\tRECOVERIES\tOUTCOME")
	lost, acked := 0, 0
	for _, r := range results {
		outcome := "ok"
		if r.Err != nil {
			outcome = "FAILED"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Round, r.Fault, r.Target, r.FaultFor.Round(time.Second),
			r.Acked, r.TotalAcked, r.Lost, r.ToReady.Round(100*time.Millisecond), recoveries(r), outcome)
		lost += r.Lost
		acked = max(acked, r.TotalAcked)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "acknowledged writes: %d, lost: %d\n", acked, lost)
}
