package initializer

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

const (
	testOwner = "shoot--dev--a/etcd-main"
	testToken = "etcdserver-test" // the token test/support/etcdserver starts members with
)

// node is one pod of the test cluster: a fixed identity and data directory that survive restarts of
// its etcd, as a pod's volume does.
type node struct {
	name           string
	client, peer   url.URL
	dataDir        string
	etcd           *etcdserver.Member
	lastInitalized State
}

// harness is a cluster of nodes named like a StatefulSet's (etcd-main-<i>) with the template's
// initial-cluster of all of them.
type harness struct {
	t       *testing.T
	nodes   []*node
	initial memberconfig.InitialCluster
	store   snapstore.SnapStore
	// metrics, when set, is every initializer's Options.Metrics.
	metrics *Metrics
}

func newHarness(t *testing.T, n int) *harness {
	h := &harness{t: t}
	for i := range n {
		nd := &node{name: fmt.Sprintf("etcd-main-%d", i), client: etcdserver.FreeURL(t), peer: etcdserver.FreeURL(t),
			dataDir: filepath.Join(t.TempDir(), "new.etcd")}
		h.nodes = append(h.nodes, nd)
		h.initial = append(h.initial, memberconfig.ClusterMember{Name: nd.name, PeerURLs: []string{nd.peer.String()}})
	}
	return h
}

// initializer builds node i's initializer asking the other nodes' client URLs.
func (h *harness) initializer(i int, mutate func(*Options)) *Initializer {
	h.t.Helper()
	nd := h.nodes[i]
	var eps []string
	for _, o := range h.nodes {
		eps = append(eps, o.client.String())
	}
	opts := Options{
		Member:         memberconfig.Member{Name: nd.name, PeerURLs: []string{nd.peer.String()}, ClientURLs: []string{nd.client.String()}},
		InitialCluster: h.initial, DataDir: nd.dataDir, ClusterToken: testToken, Owner: testOwner,
		ClusterEndpoints: eps, Store: h.store, Metrics: h.metrics, ProbeTimeout: 2 * time.Second, PollInterval: 200 * time.Millisecond,
		Log: testr.New(h.t),
	}
	if h.store != nil {
		cfg := snapshotter.Default()
		cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", time.Hour, 0
		opts.TakeFullSnapshot = FullSnapshotWith(cfg, h.store, logr.Discard())
	}
	if mutate != nil {
		mutate(&opts)
	}
	in, err := New(opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return in
}

// initialize runs node i's full initialization and requires case want.
func (h *harness) initialize(i int, want Case) State {
	h.t.Helper()
	in := h.initializer(i, nil)
	ctx, cancel := context.WithTimeout(h.t.Context(), 2*time.Minute)
	defer cancel()
	if err := in.Initialize(ctx, podwire.InitFull); err != nil {
		h.t.Fatalf("%s: Initialize: %v", h.nodes[i].name, err)
	}
	st := in.State()
	if st.Case != want {
		h.t.Fatalf("%s: case %s, want %s", h.nodes[i].name, st.Case, want)
	}
	h.nodes[i].lastInitalized = st
	return st
}

// config is the etcd configuration node i starts with after an initialization that produced st: what
// memberconfig renders from the template and the state.
func (h *harness) config(i int, st State) etcdserver.MemberConfig {
	nd := h.nodes[i]
	cfg := etcdserver.MemberConfig{Name: nd.name, DataDir: nd.dataDir, ClientURL: nd.client, PeerURL: nd.peer,
		InitialCluster: h.initial.String(), ClusterState: st.ClusterState}
	if st.JoinMembers != nil {
		cfg.InitialCluster = memberconfig.JoinCluster(st.JoinMembers, nd.name, []string{nd.peer.String()}).String()
	}
	return cfg
}

// start starts the given nodes together with their last initialization's state.
func (h *harness) start(idx ...int) {
	h.t.Helper()
	var cfgs []etcdserver.MemberConfig
	for _, i := range idx {
		cfgs = append(cfgs, h.config(i, h.nodes[i].lastInitalized))
	}
	for k, m := range etcdserver.StartMembers(h.t, cfgs...) {
		h.nodes[idx[k]].etcd = m
	}
}

func (h *harness) stop(idx ...int) {
	for _, i := range idx {
		h.nodes[i].etcd.Stop()
	}
}

// bootstrap initializes and starts a fresh cluster of all nodes (cases 1 and 2).
func (h *harness) bootstrap() {
	h.t.Helper()
	var all []int
	for i := range h.nodes {
		want := CaseBootstrapFollowing
		if i == 0 {
			want = CaseBootstrapFirst
		}
		h.initialize(i, want)
		all = append(all, i)
	}
	h.start(all...)
}

// client balances over the running nodes.
func (h *harness) client() *clientv3.Client {
	var eps []string
	for _, nd := range h.nodes {
		if nd.etcd != nil && !nd.etcd.Stopped() {
			eps = append(eps, nd.etcd.Endpoint())
		}
	}
	return etcdserver.NewClient(h.t, eps...)
}

// initializeWaiting starts node i's full initialization, which has no cluster to join yet and waits. The
// returned function waits for it (a minute at most), requires that it joined the running cluster (case
// CaseNonQuorateFollowingWait, cluster state existing), and starts and promotes the member.
func (h *harness) initializeWaiting(i int, mutate func(*Options)) (joined func()) {
	h.t.Helper()
	waited := make(chan error, 1)
	in := h.initializer(i, mutate)
	go func() { waited <- in.Initialize(context.Background(), podwire.InitFull) }()
	return func() {
		h.t.Helper()
		name := h.nodes[i].name
		select {
		case err := <-waited:
			if err != nil {
				h.t.Fatalf("%s: %v", name, err)
			}
		case <-time.After(time.Minute):
			h.t.Fatalf("%s did not join the restored cluster", name)
		}
		if st := in.State(); st.Case != CaseNonQuorateFollowingWait || st.ClusterState != "existing" {
			h.t.Fatalf("%s state %+v, want to join the restored cluster", name, st)
		}
		h.nodes[i].lastInitalized = in.State()
		h.start(i)
		h.promote(i)
	}
}

// promote promotes node i's learner once it has caught up (etcd refuses before).
func (h *harness) promote(i int) {
	h.t.Helper()
	cli := h.client()
	id := uint64(h.nodes[i].etcd.Etcd.Server.MemberID())
	eventually(h.t, time.Minute, "learner promotion", func() bool {
		_, err := cli.MemberPromote(h.t.Context(), id)
		return err == nil
	})
}

func putN(t *testing.T, cli *clientv3.Client, prefix string, n int) int64 {
	t.Helper()
	var rev int64
	for i := range n {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("%s%04d", prefix, i), fmt.Sprintf("value-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	return rev
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
