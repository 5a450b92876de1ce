// Package flow runs a reconcile flow as a slice of named steps. Each step says whether the flow continues,
// stops and comes back later, or failed; the runner short-circuits on anything but "continue". Writing the
// spec, status and deletion flows this way makes each one read as the list of its steps, and keeps the
// rules for requeues and errors in one place.
package flow

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

type outcome int

const (
	outcomeContinue outcome = iota
	outcomeRequeue
	outcomeStop
	outcomeError
)

// Result is what a step decided. The zero value continues.
type Result struct {
	outcome outcome
	after   time.Duration
	reason  string
	err     error
}

// Continue lets the next step run.
func Continue() Result { return Result{} }

// RequeueAfter stops the flow without a failure and asks to run it again after d: a precondition is not
// met yet (e.g. members still switching to peer TLS, components still being deleted).
func RequeueAfter(d time.Duration, reason string) Result {
	return Result{outcome: outcomeRequeue, after: d, reason: reason}
}

// Stop ends the flow successfully without running the remaining steps (e.g. nothing to do).
func Stop(reason string) Result { return Result{outcome: outcomeStop, reason: reason} }

// Fail stops the flow with an error; the controller retries it with back-off.
func Fail(err error) Result { return Result{outcome: outcomeError, err: err} }

// Failed tells whether the flow ended with an error.
func (r Result) Failed() bool { return r.outcome == outcomeError }

// Requeued tells whether the flow asked to be run again later.
func (r Result) Requeued() bool { return r.outcome == outcomeRequeue }

// Err is the error of a failed flow, nil otherwise.
func (r Result) Err() error { return r.err }

// After is the requeue delay of a requeued flow, 0 otherwise.
func (r Result) After() time.Duration { return r.after }

// Reason explains a requeue or a stop.
func (r Result) Reason() string { return r.reason }

// Step is one named part of a flow. Run gets the context of the reconcile.
type Step struct {
	Name string
	Run  func(ctx context.Context) Result
}

// Run executes steps in order and returns the first result that is not Continue; a flow whose steps all
// continue returns Continue. Every step is logged at V(1) with its name, so a stuck flow shows where.
func Run(ctx context.Context, log logr.Logger, steps []Step) Result {
	for _, step := range steps {
		result := step.Run(ctx)
		switch result.outcome {
		case outcomeContinue:
			log.V(1).Info("Step done", "step", step.Name)
			continue
		case outcomeError:
			result.err = fmt.Errorf("step %q: %w", step.Name, result.err)
			log.V(1).Info("Step failed", "step", step.Name, "error", result.err.Error())
		default:
			log.V(1).Info("Step ended the flow", "step", step.Name, "requeue", result.after, "reason", result.reason)
		}
		return result
	}
	return Continue()
}

// Combine merges the results of flows that ran in one reconcile into the controller's answer: an error
// wins (back-off), otherwise the shortest positive requeue delay among the results and periodic.
func Combine(periodic time.Duration, results ...Result) (ctrl.Result, error) {
	after := periodic
	for _, r := range results {
		if r.Failed() {
			return ctrl.Result{}, r.err
		}
		if r.Requeued() && r.after > 0 && (after <= 0 || r.after < after) {
			after = r.after
		}
	}
	return ctrl.Result{RequeueAfter: after}, nil
}
