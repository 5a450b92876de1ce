package memberconfig

import (
	"testing"

	. "github.com/onsi/gomega"
)

// Every pod's client address leads to its member name (the member lease's name), with and without a
// member-name-prefix; a template of one member's URLs has no pods to tell apart.
func TestMembersByClientAddress(t *testing.T) {
	g := NewWithT(t)
	for prefix, member := range map[string]string{"": "etcd-main-1", "shoot--p--s": "shoot--p--s-etcd-main-1"} {
		got := MembersByClientAddress(rendered(t, newEtcd(3, false, prefix)))
		g.Expect(got).To(HaveLen(3))
		g.Expect(got).To(HaveKeyWithValue("etcd-main-1.etcd-main-peer.shoot--p--s.svc:2379", member))
	}
	g.Expect(MembersByClientAddress(Template{"advertise-client-urls": clientURL("etcd-main-0")})).To(BeEmpty())
}
