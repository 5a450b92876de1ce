package sidecar

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPrefixedMembersBootstrapRenewTheirLeasesAndRejoin runs a 3-member Etcd with spec.memberNamePrefix
// through the sidecar and the wrapper from the template druid renders (initial-cluster keyed by pod,
// member-name-prefix): the members bootstrap as `<prefix>-<pod>`, each renews the member lease of that
// name, and a member whose data is lost rejoins as a learner under the same name and is promoted.
func TestPrefixedMembersBootstrapRenewTheirLeasesAndRejoin(t *testing.T) {
	g := NewWithT(t)
	const prefix = "shoot--p--s"
	c := newPrefixedCluster(t, 3, prefix)
	c.renewMemberLeases()
	cli := c.startAll()

	names := func(g Gomega) map[string]bool {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		list, err := cli.MemberList(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string]bool{}
		for _, m := range list.Members {
			out[m.Name] = m.IsLearner
		}
		return out
	}
	want := map[string]bool{prefix + "-etcd-main-0": false, prefix + "-etcd-main-1": false, prefix + "-etcd-main-2": false}
	g.Eventually(names, time.Minute, 500*time.Millisecond).Should(Equal(want))
	for _, p := range c.pods {
		g.Eventually(c.leaseHolder, time.Minute, 200*time.Millisecond).WithArguments(prefix+"-"+p.name).ShouldNot(BeEmpty(), "member lease of %s", p.name)
	}
	putRetrying(t, cli, "a/", 20)
	// The sidecars did all of that with the narrow Role, which is enforced: their account reads no pods.
	_, err := c.pods[0].sidecar.Kubernetes.CoreV1().Pods(c.namespace).List(t.Context(), metav1.ListOptions{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing pods as the etcd service account: %v", err)

	wiped := c.pods[2]
	wiped.stop()
	g.Expect(os.RemoveAll(wiped.dataDir)).To(Succeed())
	wiped.start()
	g.Eventually(wiped.ready, 3*time.Minute, 200*time.Millisecond).Should(BeTrue())
	g.Eventually(names, 2*time.Minute, 500*time.Millisecond).Should(Equal(want), "rejoined under its member name, voting")
}
