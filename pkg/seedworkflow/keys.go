package seedworkflow

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// KeysPerMember reads the keys under prefix from every member of role on its own, by pod name. The reads
// are linearizable, so a member answers only once it caught up with the leader: a key one member lacks
// is missing there, not merely late.
func KeysPerMember(ctx context.Context, env *Env, role, prefix string) (map[string]map[string]bool, error) {
	ips, err := MemberIPs(ctx, env, role)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(ips)) {
		cli, err := EtcdClientFor(ctx, env, role, "https://"+net.JoinHostPort(ips[name], strconv.Itoa(clientPort)))
		if err != nil {
			return nil, err
		}
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		_ = cli.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s from %s: %w", prefix, name, err)
		}
		keys := make(map[string]bool, len(resp.Kvs))
		for _, kv := range resp.Kvs {
			keys[string(kv.Key)] = true
		}
		out[name] = keys
	}
	return out, nil
}

// MissingKeys are the keys of want that keys lacks, in want's order.
func MissingKeys(keys map[string]bool, want []string) []string {
	var missing []string
	for _, k := range want {
		if !keys[k] {
			missing = append(missing, k)
		}
	}
	return missing
}
