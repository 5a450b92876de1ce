//go:build e2e

package e2e

import (
	"context"
	"maps"
	"net"
	"slices"
	"strconv"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// etcdClientPort is the members' client port.
const etcdClientPort = 2379

// keysPerMember reads the keys under prefix from every member on its own (linearizable, so a member
// answers only once it caught up with the leader), by pod name.
func keysPerMember(ctx context.Context, env *seedworkflow.Env, role, prefix string) map[string]map[string]bool {
	ips, err := seedworkflow.MemberIPs(ctx, env, role)
	Expect(err).NotTo(HaveOccurred())
	out := map[string]map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(ips)) {
		cli, err := seedworkflow.EtcdClientFor(ctx, env, role, "https://"+net.JoinHostPort(ips[name], strconv.Itoa(etcdClientPort)))
		Expect(err).NotTo(HaveOccurred())
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		_ = cli.Close()
		Expect(err).NotTo(HaveOccurred(), "reading %s from %s", prefix, name)
		keys := map[string]bool{}
		for _, kv := range resp.Kvs {
			keys[string(kv.Key)] = true
		}
		out[name] = keys
	}
	return out
}

// expectKeysOnEveryMember asserts that each of want members holds every key of acked under prefix and
// that all members hold the same number of keys there; it returns that number.
func expectKeysOnEveryMember(ctx context.Context, env *seedworkflow.Env, role, prefix string, members int, acked []string) int {
	perMember := keysPerMember(ctx, env, role, prefix)
	Expect(perMember).To(HaveLen(members), "members with a pod IP")
	count := -1
	for name, keys := range perMember {
		var lost []string
		for _, k := range acked {
			if !keys[k] {
				lost = append(lost, k)
			}
		}
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
