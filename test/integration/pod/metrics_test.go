package pod

import (
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// Every metric Gardener's dashboards and alerts query is on the running sidecar's /metrics under the
// upstream name: the registry of Run wires the snapshotter's, the defragmentation's, the
// initializer's, the membership's and the pod's network metrics. After this one-member pod's initialization its validation
// is counted, and the membership round sees a cluster of one voting member.
func TestSidecarServesTheUpstreamMetricNames(t *testing.T) {
	g := NewWithT(t)
	p := newLocalPod(t)
	p.writeTemplate(nil)
	stop := p.run()
	defer stop()
	g.Eventually(p.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())

	scrape := func() string {
		code, body := do(t, http.MethodGet, p.sidecarURL()+"/metrics")
		g.Expect(code).To(Equal(http.StatusOK))
		return body
	}
	g.Eventually(scrape, 30*time.Second, 200*time.Millisecond).Should(ContainSubstring("etcdbr_cluster_size 1\n"))
	body := scrape()
	for _, series := range []string{
		`etcdbr_validation_duration_seconds_count{succeeded="true"} 1`,
		`etcdbr_validation_duration_seconds_count{succeeded="false"} 0`,
		`etcdbr_restoration_duration_seconds_count{restore="single_node",succeeded="false"} 0`,
		`etcdbr_restoration_duration_seconds_count{restore="single_member",succeeded="true"} 0`,
		`etcdbr_defragmentation_duration_seconds_count{endpoint="",succeeded="true"} 0`,
		`etcdbr_defragmentation_duration_seconds_count{endpoint="",succeeded="false"} 0`,
		`etcdbr_snapstore_latest_deltas_total 0`,
		`etcdbr_snapstore_latest_deltas_revisions_total 0`,
		`etcdbr_is_learner 0`,
		`etcdbr_is_learner_count_total{succeeded="true"} 0`,
		`etcdbr_add_learner_duration_seconds_count{succeeded="false"} 0`,
		`etcdbr_member_promote_duration_seconds_count{succeeded="true"} 0`,
		`etcdbr_snapshot_gc_total{kind="Full",succeeded="true"} 0`,
		`etcdbr_snapshotter_failure{error=""} 0`,
	} {
		g.Expect(strings.Split(body, "\n")).To(ContainElement(series))
	}
	for _, counter := range []string{"etcdbr_network_transmitted_bytes ", "etcdbr_network_received_bytes "} {
		g.Expect(strings.Split(body, "\n")).To(ContainElement(HavePrefix(counter)))
	}
}
