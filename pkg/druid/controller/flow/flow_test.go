package flow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
)

func recordingSteps(ran *[]string, results ...Result) []Step {
	steps := make([]Step, 0, len(results))
	for i, r := range results {
		name := string(rune('a' + i))
		steps = append(steps, Step{Name: name, Run: func(context.Context) Result {
			*ran = append(*ran, name)
			return r
		}})
	}
	return steps
}

func TestRunShortCircuits(t *testing.T) {
	boom := errors.New("boom")
	for name, tc := range map[string]struct {
		results []Result
		wantRan []string
		check   func(g Gomega, r Result)
	}{
		"all continue": {
			results: []Result{Continue(), Continue(), Continue()},
			wantRan: []string{"a", "b", "c"},
			check:   func(g Gomega, r Result) { g.Expect(r.Failed() || r.Requeued()).To(BeFalse()) },
		},
		"requeue stops": {
			results: []Result{Continue(), RequeueAfter(10*time.Second, "waiting"), Continue()},
			wantRan: []string{"a", "b"},
			check: func(g Gomega, r Result) {
				g.Expect(r.Requeued()).To(BeTrue())
				g.Expect(r.After()).To(Equal(10 * time.Second))
				g.Expect(r.Reason()).To(Equal("waiting"))
			},
		},
		"error stops and names the step": {
			results: []Result{Fail(boom), Continue()},
			wantRan: []string{"a"},
			check: func(g Gomega, r Result) {
				g.Expect(r.Failed()).To(BeTrue())
				g.Expect(r.Err()).To(MatchError(boom))
				g.Expect(r.Err().Error()).To(ContainSubstring(`step "a"`))
			},
		},
		"stop ends without requeue": {
			results: []Result{Stop("nothing to do"), Continue()},
			wantRan: []string{"a"},
			check:   func(g Gomega, r Result) { g.Expect(r.Failed() || r.Requeued()).To(BeFalse()) },
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var ran []string
			r := Run(context.Background(), logr.Discard(), recordingSteps(&ran, tc.results...))
			g.Expect(ran).To(Equal(tc.wantRan))
			tc.check(g, r)
		})
	}
}

func TestCombine(t *testing.T) {
	g := NewWithT(t)
	res, err := Combine(15*time.Second, Continue(), RequeueAfter(10*time.Second, ""))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(ctrl.Result{RequeueAfter: 10 * time.Second}))

	res, err = Combine(15*time.Second, RequeueAfter(time.Minute, ""), Continue())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(ctrl.Result{RequeueAfter: 15 * time.Second}))

	_, err = Combine(15*time.Second, RequeueAfter(time.Second, ""), Fail(errors.New("x")))
	g.Expect(err).To(MatchError("x"))
}
