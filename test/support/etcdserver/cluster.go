package etcdserver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// startAttempts is how often a start is retried when a probed port was taken in the meantime.
const startAttempts = 3

// Cluster is a set of members started together.
type Cluster struct {
	Members []*Member
}

// Start runs a single-member cluster with default settings.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return StartCluster(t, 1, nil)
}

// StartCluster runs size members named m0, m1, ... on 127.0.0.1 and waits until all are ready.
// configure (optional) adjusts each member's embed configuration. Everything is stopped when the
// test ends.
func StartCluster(t testing.TB, size int, configure func(*embed.Config)) *Cluster {
	t.Helper()
	var lastErr error
	for range startAttempts {
		c, err := tryStartCluster(t, size, configure)
		if err == nil {
			return c
		}
		lastErr = err
	}
	t.Fatalf("starting a %d-member etcd cluster: %v", size, lastErr)
	return nil
}

func tryStartCluster(t testing.TB, size int, configure func(*embed.Config)) (*Cluster, error) {
	cfgs := make([]MemberConfig, size)
	var initial []string
	for i := range cfgs {
		cfgs[i] = MemberConfig{Name: fmt.Sprintf("m%d", i), ClientURL: FreeURL(t), PeerURL: FreeURL(t), Configure: configure}
		initial = append(initial, fmt.Sprintf("%s=%s", cfgs[i].Name, cfgs[i].PeerURL.String()))
	}
	c := &Cluster{}
	for i := range cfgs {
		cfgs[i].InitialCluster = strings.Join(initial, ",")
		m, err := startMember(t, cfgs[i])
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Members = append(c.Members, m)
	}
	var errs []error
	for _, m := range c.Members {
		if err := m.waitReady(); err != nil {
			errs = append(errs, fmt.Errorf("member %s: %w", m.Config.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Endpoints are the client URLs of all members that are not stopped.
func (c *Cluster) Endpoints() []string {
	var out []string
	for _, m := range c.Members {
		if !m.stopped {
			out = append(out, m.Endpoint())
		}
	}
	return out
}

// Client opens a client balancing over all running members; it is closed when the test ends.
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	return NewClient(t, c.Endpoints()...)
}

// Leader is the member that currently leads, or nil if none of the running members does.
func (c *Cluster) Leader() *Member {
	for _, m := range c.Members {
		if !m.stopped && m.Etcd.Server.Leader() == m.Etcd.Server.MemberID() {
			return m
		}
	}
	return nil
}

// Stop stops every member.
func (c *Cluster) Stop() {
	for _, m := range c.Members {
		m.Stop()
	}
}

// StartMembers starts the given members concurrently (members of a new multi-member cluster must start
// together to elect a leader) and waits until every one is ready. Unlike StartCluster, the caller chooses
// names, URLs, data directories and cluster state, e.g. to restart members of a cluster on their data
// directories or to start a cluster from configurations an initializer produced. Each configuration
// should carry its URLs (FreeURL) and its InitialCluster.
func StartMembers(t testing.TB, cfgs ...MemberConfig) []*Member {
	t.Helper()
	members := make([]*Member, 0, len(cfgs))
	for _, cfg := range cfgs {
		m, err := startMember(t, cfg)
		if err != nil {
			t.Fatalf("starting etcd member %s: %v", cfg.Name, err)
		}
		members = append(members, m)
	}
	for _, m := range members {
		if err := m.waitReady(); err != nil {
			t.Fatalf("etcd member %s: %v", m.Config.Name, err)
		}
	}
	return members
}

// Stopped tells whether Stop was called.
func (m *Member) Stopped() bool { return m.stopped }

// Fragment writes and deletes about 3 MiB through cli and compacts physically, leaving free pages for a
// defragmentation to give back.
func Fragment(t *testing.T, cli *clientv3.Client) {
	t.Helper()
	value := strings.Repeat("x", 1024)
	var rev int64
	for i := range 3000 {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("k/%05d", i), value)
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	resp, err := cli.Delete(t.Context(), "k/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(t.Context(), max(rev, resp.Header.Revision), clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
}
