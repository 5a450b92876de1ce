package webhook

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hostileCase is one row of the sweep (TestHostileObjectSweep): a change to a valid object of kind T and
// what the apiserver, with druid's validation webhook registered, must answer when the changed object is
// created. Rows are grouped per kind in sweep_<kind>_test.go; add a row there.
type hostileCase[T client.Object] struct {
	name   string
	mutate func(T)
	want   outcome
}

// outcome is what a create must come to: refused naming a field, or admitted (with a warning).
type outcome struct {
	// refusedAt is the field path (or a text) the 422 Invalid error must contain; "" means admitted.
	refusedAt string
	// warning is a text one admission warning must contain; only for admitted objects.
	warning string
	// absent is a text neither the error nor any warning may contain (e.g. a credential).
	absent string
}

// refused expects a 422 Invalid that names fld.
func refused(fld string) outcome { return outcome{refusedAt: fld} }

// warned expects admission with a warning containing text.
func warned(text string) outcome { return outcome{warning: text} }

// admitted expects admission.
var admitted = outcome{}

// runSweep creates, for every row, a copy of base (named sweep-<row>) changed by the row, and checks the
// outcome.
func runSweep[T client.Object](t *testing.T, c client.Client, warnings *warningRecorder, base T, rows []hostileCase[T]) {
	t.Helper()
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := base.DeepCopyObject().(T)
			obj.SetName(fmt.Sprintf("sweep-%03d", i))
			row.mutate(obj)
			warnings.take()
			err := c.Create(context.Background(), obj)
			got := warnings.take()
			if row.want.refusedAt != "" {
				g.Expect(err).To(HaveOccurred(), "must be refused; warnings: %v", got)
				g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
				g.Expect(err.Error()).To(ContainSubstring(row.want.refusedAt), "the refusal names the field")
			} else {
				g.Expect(err).NotTo(HaveOccurred(), "must be admitted")
				if row.want.warning != "" {
					g.Expect(got).To(ContainElement(ContainSubstring(row.want.warning)), "admission warnings")
				}
			}
			if row.want.absent != "" {
				if err != nil {
					g.Expect(err.Error()).NotTo(ContainSubstring(row.want.absent))
				}
				g.Expect(got).NotTo(ContainElement(ContainSubstring(row.want.absent)))
			}
		})
	}
}
