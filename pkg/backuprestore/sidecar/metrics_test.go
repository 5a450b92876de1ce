package sidecar

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestRestorationMetric: etcdbr_restoration_duration_seconds{succeeded} under the deployed name, with
// both outcomes exported from the start and each restore counted under its outcome.
func TestRestorationMetric(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewPedanticRegistry()
	observe := restorationMetric(reg)
	count := func(succeeded string) string {
		return `etcdbr_restoration_duration_seconds_count{succeeded="` + succeeded + `"}`
	}
	g.Expect(testutil.GatherAndCount(reg, "etcdbr_restoration_duration_seconds")).To(Equal(2))

	observe(90*time.Second, true)
	observe(3*time.Second, false)
	observe(5*time.Second, false)
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	counts := map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			counts[count(m.GetLabel()[0].GetValue())] = m.GetHistogram().GetSampleCount()
		}
	}
	g.Expect(counts).To(Equal(map[string]uint64{count("true"): 1, count("false"): 2}))
	g.Expect(strings.HasPrefix(families[0].GetName(), "etcdbr_restoration_duration_seconds")).To(BeTrue())
}
