package defrag

import (
	"errors"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// staleAdvertisedURL starts a listener that stands for the address a member's advertised client URL
// resolves to while the seed's DNS still caches the address of the member's previous pod: nothing that
// answers as etcd, and every connection to it is counted.
func staleAdvertisedURL(t *testing.T) (url.URL, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var dialed atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			_ = conn.Close()
		}
	}()
	return url.URL{Scheme: "http", Host: l.Addr().String()}, &dialed
}

// The backup leader's checks ask its own member at the local endpoint, never at the member's advertised
// client URL: asking that URL (the pod's DNS name) is what keeps a replaced pod's old address in the
// seed's DNS cache. With the advertised URL leading nowhere, the survey and the defragmentation of the
// single member succeed through the local endpoint without a connection to the advertised address.
func TestTheLocalMemberIsAskedAtTheLocalEndpoint(t *testing.T) {
	stale, dialed := staleAdvertisedURL(t)
	c := etcdserver.StartCluster(t, 1, func(cfg *embed.Config) { cfg.AdvertiseClientUrls = []url.URL{stale} })
	cli := c.Client(t)
	etcdserver.Fragment(t, cli)
	local := c.Members[0].Endpoint()

	keeper, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, LocalEndpoint: local, RequestTimeout: 2 * time.Second, Log: testr.New(t)}})
	if err != nil {
		t.Fatal(err)
	}
	surveyed, err := keeper.survey(t.Context())
	if err != nil {
		t.Fatalf("survey through the local endpoint: %v", err)
	}
	if spaces := surveyed.spaces(); len(spaces) != 1 || spaces[0].Endpoint != local || surveyed.leader == nil {
		t.Fatalf("survey saw %+v, leader %v; want the member at %s as the leader", spaces, surveyed.leader, local)
	}
	res, err := Run(t.Context(), Options{Client: cli, LocalEndpoint: local, RequestTimeout: 2 * time.Second, Log: testr.New(t)})
	if err != nil {
		t.Fatalf("defragmentation through the local endpoint: %v", err)
	}
	if len(res.Members) != 1 || res.Members[0].Endpoint != local || res.Members[0].DBSizeAfter >= res.Members[0].DBSizeBefore {
		t.Fatalf("result %+v", res)
	}
	if n := dialed.Load(); n != 0 {
		t.Fatalf("%d connection(s) to the member's advertised client URL %s", n, stale.String())
	}

	// Without the local endpoint the member is asked at its advertised URL, which does not answer.
	if _, err := Run(t.Context(), Options{Client: cli, RequestTimeout: 2 * time.Second, Log: testr.New(t)}); !errors.Is(err, ErrUnhealthy) {
		t.Fatalf("Run without the local endpoint = %v, want %v", err, ErrUnhealthy)
	}
}
