package configmap

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func joinSource(e *druidv1alpha1.Etcd) {
	e.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
		Members: []druidv1alpha1.BootstrapExistingMember{
			{Name: "etcd-old-0", PeerURLs: []string{"https://etcd-old-0.etcd-old-peer.shoot--p--s.svc:2380", "https://10.0.0.7:2380"}},
			{Name: "etcd-old-1", PeerURLs: []string{"https://etcd-old-1.etcd-old-peer.shoot--p--s.svc:2380"}},
		},
		ClientEndpoints: []string{"https://etcd-old-client.shoot--p--s.svc:2379"},
	}
}

// TestExistingClusterMembersFollowTheOwnMembers: the source members are appended to initial-cluster under
// their own names, one entry per peer URL, as upstream etcd-druid renders them; they get no entry in the
// URL maps (they are not members this Etcd runs).
func TestExistingClusterMembersFollowTheOwnMembers(t *testing.T) {
	g := NewWithT(t)
	e := newEtcd(2, true, true)
	joinSource(e)
	cfg := parse(t, e)
	g.Expect(strings.Split(cfg["initial-cluster"].(string), ",")).To(Equal([]string{
		"etcd-main-0=https://etcd-main-0.etcd-main-peer.shoot--p--s.svc:2380",
		"etcd-main-1=https://etcd-main-1.etcd-main-peer.shoot--p--s.svc:2380",
		"etcd-old-0=https://etcd-old-0.etcd-old-peer.shoot--p--s.svc:2380",
		"etcd-old-0=https://10.0.0.7:2380",
		"etcd-old-1=https://etcd-old-1.etcd-old-peer.shoot--p--s.svc:2380",
	}))
	g.Expect(cfg["initial-advertise-peer-urls"]).To(HaveLen(2))
	g.Expect(cfg["advertise-client-urls"]).To(HaveLen(2))
	g.Expect(cfg["initial-cluster-state"]).To(Equal("new"), "the sidecar decides the state when the member joins")
}

// TestHibernatedJoiningEtcdHasNoMembers: without members of its own, nothing joins, and initial-cluster
// stays empty as for every hibernated Etcd.
func TestHibernatedJoiningEtcdHasNoMembers(t *testing.T) {
	e := newEtcd(0, true, true)
	joinSource(e)
	NewWithT(t).Expect(parse(t, e)["initial-cluster"]).To(BeEmpty())
}
