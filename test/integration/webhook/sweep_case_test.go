package webhook

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/test/support/hostile"
)

// runSweep creates, for every row, a copy of base (named sweep-<row>) changed by the row, and checks the
// outcome.
func runSweep[T client.Object](t *testing.T, c client.Client, warnings *warningRecorder, base T, rows []hostile.Case[T]) {
	t.Helper()
	for i, row := range rows {
		t.Run(row.Name, func(t *testing.T) {
			g := NewWithT(t)
			obj := base.DeepCopyObject().(T)
			obj.SetName(fmt.Sprintf("sweep-%03d", i))
			row.Mutate(obj)
			warnings.take()
			err := c.Create(context.Background(), obj)
			got := warnings.take()
			if row.Want.RefusedAt != "" {
				g.Expect(err).To(HaveOccurred(), "must be refused; warnings: %v", got)
				g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
				g.Expect(err.Error()).To(ContainSubstring(row.Want.RefusedAt), "the refusal names the field")
			} else {
				g.Expect(err).NotTo(HaveOccurred(), "must be admitted")
				if row.Want.Warning != "" {
					g.Expect(got).To(ContainElement(ContainSubstring(row.Want.Warning)), "admission warnings")
				}
			}
			if row.Want.Absent != "" {
				if err != nil {
					g.Expect(err.Error()).NotTo(ContainSubstring(row.Want.Absent))
				}
				g.Expect(got).NotTo(ContainElement(ContainSubstring(row.Want.Absent)))
			}
		})
	}
}
