package wrapper

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/server/v3/embed"
)

// A member that joins a running cluster with empty data starts etcd only once a member of that cluster
// answers: etcd would fail after two seconds without one, and the kubelet restart it later every time.
func TestJoiningMemberStartsOnceTheClusterAnswers(t *testing.T) {
	g := NewWithT(t)
	var answering atomic.Bool
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !answering.Load() {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"etcdserver":"3.7.3","etcdcluster":"3.7.0"}`))
	}))
	defer peer.Close()
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.ClusterState = "joiner", t.TempDir(), embed.ClusterStateFlagExisting
	cfg.InitialCluster = "first=" + peer.URL + ",joiner=http://127.0.0.1:1"

	done := make(chan struct{})
	go func() { defer close(done); waitForJoinPeers(t.Context(), cfg, 50*time.Millisecond, testr.New(t)) }()
	g.Consistently(done, time.Second, 50*time.Millisecond).ShouldNot(BeClosed(), "etcd started before the cluster answered")
	answering.Store(true)
	g.Eventually(done, 10*time.Second, 50*time.Millisecond).Should(BeClosed())
}

// A member with data starts from it and asks nobody; a member of a new cluster is not held either.
func TestMembersWithDataOrOfANewClusterAreNotHeld(t *testing.T) {
	g := NewWithT(t)
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.ClusterState = "member", t.TempDir(), embed.ClusterStateFlagExisting
	cfg.InitialCluster = "silent=http://127.0.0.1:1,member=http://127.0.0.1:2"
	wal := filepath.Join(cfg.Dir, "member", "wal")
	g.Expect(os.MkdirAll(wal, 0o700)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(wal, "0000000000000000-0000000000000000.wal"), []byte("x"), 0o600)).To(Succeed())
	waitForJoinPeers(t.Context(), cfg, time.Hour, testr.New(t))

	cfg.Dir, cfg.ClusterState = t.TempDir(), embed.ClusterStateFlagNew
	waitForJoinPeers(t.Context(), cfg, time.Hour, testr.New(t))
}
