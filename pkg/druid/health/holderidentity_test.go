package health

import (
	"testing"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestParseHolderIdentity(t *testing.T) {
	for in, tc := range map[string]struct {
		want HolderIdentity
		ok   bool
	}{
		"8e9e05c52164694d:cdf818194e3a8c32:Leader": {HolderIdentity{MemberID: "8e9e05c52164694d", ClusterID: "cdf818194e3a8c32", Role: druidv1alpha1.EtcdRoleLeader}, true},
		"8e9e05c52164694d:cdf818194e3a8c32:Member": {HolderIdentity{MemberID: "8e9e05c52164694d", ClusterID: "cdf818194e3a8c32", Role: druidv1alpha1.EtcdRoleMember}, true},
		"272e204152:Leader":                        {HolderIdentity{MemberID: "272e204152", Role: druidv1alpha1.EtcdRoleLeader}, true},
		"272e204153:Member":                        {HolderIdentity{MemberID: "272e204153", Role: druidv1alpha1.EtcdRoleMember}, true},
		"":                                         {},
		"272e204152":                               {},
		"272e204152:Learner":                       {},
		":Leader":                                  {},
		"a:b:c:Leader":                             {},
	} {
		t.Run(in, func(t *testing.T) {
			g := NewWithT(t)
			got, ok := ParseHolderIdentity(in)
			g.Expect(ok).To(Equal(tc.ok))
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
