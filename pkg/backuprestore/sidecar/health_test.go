package sidecar

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

func TestMemberHealthFollowsBackupsOfASingleMemberOnly(t *testing.T) {
	ctx := context.Background()
	failing := func(since time.Time) func() time.Time { return func() time.Time { return since } }
	long, recent := time.Now().Add(-time.Minute), time.Now()

	single := etcdserver.Start(t)
	ep := single.Endpoints()[0]
	cli := etcdserver.NewClient(t, ep)
	for _, tc := range []struct {
		name  string
		since time.Time
		grace time.Duration
		want  bool
	}{
		{name: "uploads succeed", since: time.Time{}, grace: 3 * time.Second, want: true},
		{name: "failing shorter than the grace", since: recent, grace: 30 * time.Second, want: true},
		{name: "failing longer than the grace", since: long, grace: 3 * time.Second, want: false},
		{name: "no grace: backups never count", since: long, grace: 0, want: true},
	} {
		t.Run("single member, "+tc.name, func(t *testing.T) {
			NewWithT(t).Expect(memberHealth(cli, ep, failing(tc.since), tc.grace)(ctx)).To(Equal(tc.want))
		})
	}

	t.Run("a member of three stays healthy", func(t *testing.T) {
		three := etcdserver.StartCluster(t, 3, nil)
		ep := three.Endpoints()[0]
		NewWithT(t).Expect(memberHealth(etcdserver.NewClient(t, ep), ep, failing(long), 3*time.Second)(ctx)).To(BeTrue())
	})
}
