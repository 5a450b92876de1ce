package etcd

import (
	"testing"

	"github.com/Masterminds/semver/v3"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
)

// The traffic distribution is named as the seed's Kubernetes version names it; without a version the
// component cannot tell, and says which field is missing instead of guessing.
func TestTrafficDistributionFollowsTheRuntimeVersion(t *testing.T) {
	g := NewWithT(t)
	for version, want := range map[string]*string{
		"1.33.9":      ptr.To("PreferClose"),
		"1.34.0-rc.1": ptr.To("PreferSameZone"),
		"1.34.0":      ptr.To("PreferSameZone"),
		"2.0.0":       ptr.To("PreferSameZone"),
	} {
		got, err := Values{TopologyAwareRoutingEnabled: true, RuntimeKubernetesVersion: semver.MustParse(version)}.trafficDistribution()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), version)
	}

	got, err := Values{RuntimeKubernetesVersion: semver.MustParse("1.34.0")}.trafficDistribution()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeNil(), "without topology-aware routing")

	_, err = Values{TopologyAwareRoutingEnabled: true}.trafficDistribution()
	g.Expect(err).To(MatchError(ContainSubstring("RuntimeKubernetesVersion is required")))
}
