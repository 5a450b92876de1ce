package backuptest

import (
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// State is what a restore must reproduce: every key with all its revision fields, and the revision.
type State struct {
	Revision int64
	KVs      map[string]*mvccpb.KeyValue
}

// StateAt reads the whole keyspace as of rev (0: now).
func StateAt(t testing.TB, cli *clientv3.Client, rev int64) State {
	t.Helper()
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := cli.Get(t.Context(), "", opts...)
	if err != nil {
		t.Fatalf("reading the keyspace at revision %d: %v", rev, err)
	}
	s := State{Revision: rev, KVs: map[string]*mvccpb.KeyValue{}}
	if rev == 0 {
		s.Revision = resp.Header.Revision
	}
	for _, kv := range resp.Kvs {
		s.KVs[string(kv.Key)] = kv
	}
	return s
}

// Diff lists every difference between want and got; empty means identical.
func Diff(want, got State) []string {
	var out []string
	if want.Revision != got.Revision {
		out = append(out, fmt.Sprintf("revision: want %d, got %d", want.Revision, got.Revision))
	}
	for k, w := range want.KVs {
		g, ok := got.KVs[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("key %q missing", k))
		case string(w.Value) != string(g.Value) || w.CreateRevision != g.CreateRevision ||
			w.ModRevision != g.ModRevision || w.Version != g.Version || w.Lease != g.Lease:
			out = append(out, fmt.Sprintf("key %q: want value %q create %d mod %d version %d lease %x, got %q %d %d %d %x",
				k, trunc(w.Value), w.CreateRevision, w.ModRevision, w.Version, w.Lease,
				trunc(g.Value), g.CreateRevision, g.ModRevision, g.Version, g.Lease))
		}
	}
	for k := range got.KVs {
		if _, ok := want.KVs[k]; !ok {
			out = append(out, fmt.Sprintf("unexpected key %q", k))
		}
	}
	return out
}

func trunc(b []byte) string {
	if len(b) > 20 {
		return string(b[:20]) + "…"
	}
	return string(b)
}
