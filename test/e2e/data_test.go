//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// expectKeysOnEveryMember asserts that each of want members holds every key of acked under prefix and
// that all members hold the same number of keys there; it returns that number.
func expectKeysOnEveryMember(ctx context.Context, env *seedworkflow.Env, role, prefix string, members int, acked []string) int {
	perMember, err := seedworkflow.KeysPerMember(ctx, env, role, prefix)
	Expect(err).NotTo(HaveOccurred())
	Expect(perMember).To(HaveLen(members), "members with a pod IP")
	count := -1
	for name, keys := range perMember {
		lost := seedworkflow.MissingKeys(keys, acked)
		Expect(lost).To(BeEmpty(), "%s lost %d of %d acknowledged writes", name, len(lost), len(acked))
		if count >= 0 {
			Expect(keys).To(HaveLen(count), "%s holds a different number of keys than the other members", name)
		}
		count = len(keys)
	}
	return count
}

// memberList is the cluster's member list as one member reports it (linearizable).
func memberList(ctx context.Context, env *seedworkflow.Env, role string) *clientv3.MemberListResponse {
	cli, err := seedworkflow.EtcdClient(ctx, env, role)
	Expect(err).NotTo(HaveOccurred())
	defer cli.Close()
	resp, err := cli.MemberList(ctx)
	Expect(err).NotTo(HaveOccurred())
	return resp
}
