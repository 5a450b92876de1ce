package snapshotter_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// In a pod the sidecar reaches its member over TLS with a client certificate; the delta watch's own
// connection gathers the encrypted stream below TLS and must still deliver every revision.
func TestDeltaWatchOverTLSDeliversEveryRevision(t *testing.T) {
	ca := testpki.NewCA(t)
	server, client := ca.Issue(t, "etcd", "localhost"), ca.Issue(t, "sidecar")
	clientURL := etcdserver.FreeURL(t)
	clientURL.Scheme, clientURL.Host = "https", "localhost:"+clientURL.Port()
	member := etcdserver.StartMember(t, etcdserver.MemberConfig{ClientURL: clientURL,
		Configure: func(c *embed.Config) { c.ClientTLSInfo = ca.TLSInfo(server) }})
	tlsConfig, err := ca.TLSInfo(client).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	dial := func(options ...grpc.DialOption) *clientv3.Client {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{member.Endpoint()}, TLS: tlsConfig, DialTimeout: 5 * time.Second,
			DialOptions: options, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cli.Close() })
		return cli
	}
	cli := dial()
	store := backuptest.Local(t)
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", time.Hour, 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, WatchClient: dial(snapshotter.WatchDialOptions()...),
		Store: store.SnapStore, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	stored := s.LastRevision()

	want := putN(t, cli, "tls-", 500, 100)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	delta, err := s.TakeDelta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if delta == nil || delta.StartRevision != stored+1 || delta.LastRevision != want {
		t.Fatalf("delta %+v, want revisions %d to %d", delta, stored+1, want)
	}
}
