package pod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
	"github.com/gardener-etcd/gardener-etcd/test/support/oldetcd"
)

// Clusters of 1 and 3 members that etcd 3.5 (or 3.4) ran, with the v2 entries of their starts
// in the WAL (default snapshot-count), are upgraded in place member by member, as druid's rolling update
// replaces the pods, under a writer: each old member is stopped (SIGTERM, or SIGKILL for the member kill
// names) and our pod (the sidecar's initializer and this wrapper with the older etcd binaries) starts on
// its data. Every member runs each older version in the cluster and leaves it in turn; at the end every
// member runs this etcd, and every acknowledged write is present after each step: each replaced member,
// and each change of any member's etcd version.
func TestInPlaceUpgradeUnderAWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clusters of old etcd binaries: tens of seconds per case")
	}
	for _, tc := range []struct {
		version string
		members int
		kill    int // the member stopped by SIGKILL; -1: all by SIGTERM
		// snapshotCount, when set, makes the old etcd snapshot after its v2 requests (more entries than
		// it): this etcd would open the data, but its cluster version (3.5) still asks for 3.6 first.
		snapshotCount int
	}{
		{version: "3.5", members: 1, kill: 0},
		{version: "3.5", members: 1, kill: -1},
		{version: "3.4", members: 1, kill: 0},
		{version: "3.5", members: 3, kill: 0},
		{version: "3.4", members: 3, kill: 1},
		{version: "3.5", members: 3, kill: -1, snapshotCount: 100},
		{version: "3.5", members: 1, kill: -1, snapshotCount: 100},
	} {
		name := fmt.Sprintf("etcd %s, %d members, member %d killed, snapshot-count %d", tc.version, tc.members, tc.kill, tc.snapshotCount)
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			members := oldetcd.NewCluster(t, "etcd-main", tc.members)
			var extra []string
			if tc.snapshotCount > 0 {
				extra = []string{"--snapshot-count", fmt.Sprint(tc.snapshotCount)}
			}
			old := startOldCluster(t, tc.version, members, extra...)
			oldetcd.Put(t, members[0], 0, 20+3*tc.snapshotCount)

			w := startWriter(t, oldetcd.ClientURLs(members))
			w.waitFor(g, 50)
			start := time.Now()
			versions := watchVersions(t, members, w)
			pods := make([]*stepPod, len(members))
			for i := len(members) - 1; i >= 0; i-- { // as the StatefulSet's rolling update
				switch {
				case i == tc.kill && tc.members == 1:
					w.holdDurably(t, func() { old[i].Kill() })
				case i == tc.kill:
					old[i].Kill()
				default:
					g.Expect(old[i].Stop()).To(Succeed())
				}
				v, ok := etcddata.InspectDataVersion(members[i].DataDir)
				g.Expect(ok).To(BeTrue())
				if tc.snapshotCount == 0 {
					g.Expect(v.LegacyEntries).To(BeNumerically(">", 0), "etcd %s logged v2 requests: member %d's data needs stepping", tc.version, i)
				}
				replaced := time.Now()
				pods[i] = startStepPod(t, members, i)
				g.Eventually(pods[i].readyz, 2*time.Minute, 100*time.Millisecond).Should(Equal(http.StatusOK), "member %d serves again", i)
				t.Logf("member %d replaced and ready after %s", i, time.Since(replaced).Round(time.Millisecond))
				w.waitFor(g, 30)
				w.checkAcknowledged(g)
			}
			g.Eventually(versions.allRun37, 3*time.Minute, 100*time.Millisecond).Should(BeTrue(), "every member ends on this etcd")
			changes, missing := versions.stop()
			t.Logf("every member runs etcd 3.7 %s after the first was replaced; version changes seen, each followed by a check of every acknowledged write: %v",
				time.Since(start).Round(time.Millisecond), changes)
			g.Expect(missing).To(BeEmpty(), "acknowledged writes missing after a version change")
			w.waitFor(g, 30)
			acked, failed := w.stop()
			w.checkAcknowledged(g)
			for _, m := range members {
				g.Eventually(func() []string { return w.missingOn(m.ClientURL) }, time.Minute, 200*time.Millisecond).
					Should(BeEmpty(), "acknowledged writes missing on %s (its own, serializable reads)", m.Name)
			}
			t.Logf("writes: %d acknowledged, %d failed attempts", acked, failed)
			for i, m := range members {
				pods[i].stop()
				v, ok := etcddata.InspectDataVersion(m.DataDir)
				g.Expect(ok).To(BeTrue())
				g.Expect(v.Unopenable()).To(BeEmpty(), "member %d's data opens under this etcd", i)
				g.Expect(initializer.MovedAside(m.DataDir)).To(BeEmpty())
				g.Expect(pods[i].restarts()).To(BeZero(), "member %d's wrapper never exited", i)
			}
		})
	}
}

// versionWatch polls the members' etcd versions, and after every change it sees reads every acknowledged
// write.
type versionWatch struct {
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	last    []string
	changes []string
	missing []string
}

func watchVersions(t *testing.T, members []oldetcd.Member, w *writer) *versionWatch {
	ctx, cancel := context.WithCancel(t.Context())
	v := &versionWatch{cancel: cancel, done: make(chan struct{}), last: make([]string, len(members))}
	go func() {
		defer close(v.done)
		for ctx.Err() == nil {
			changed := false
			for i, m := range members {
				now := serverVersion(t, m)
				if !strings.HasPrefix(now, "3.") {
					continue // stopped or restarting
				}
				v.mu.Lock()
				if v.last[i] != "" && v.last[i] != now {
					v.changes = append(v.changes, fmt.Sprintf("%s %s→%s", m.Name, v.last[i], now))
					changed = true
				}
				v.last[i] = now
				v.mu.Unlock()
			}
			if changed {
				missing := w.missingRetrying(ctx)
				if ctx.Err() != nil {
					return // stopped while reading: the test reads every write once more itself
				}
				v.mu.Lock()
				v.missing = append(v.missing, missing...)
				v.mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond) // polling pace
		}
	}()
	t.Cleanup(func() { v.stop() })
	return v
}

func (v *versionWatch) allRun37() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range v.last {
		if !strings.HasPrefix(s, "3.7.") {
			return false
		}
	}
	return true
}

func (v *versionWatch) stop() (changes, missing []string) {
	v.cancel()
	<-v.done
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changes, v.missing
}

// Without the older etcd binaries the wrapper starts no etcd on such data, says why and leaves it as it is.
func TestOldDataWithoutStepBinariesIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an old etcd binary")
	}
	g := NewWithT(t)
	m := oldetcd.WriteDataDir(t, filepath.Join(t.TempDir(), "data"), oldetcd.Write{Version: "3.5", Keys: 5, Stop: oldetcd.Kill})
	m.Name = "etcd-main-0"
	before, ok := etcddata.InspectDataVersion(m.DataDir)
	g.Expect(ok).To(BeTrue())
	p := newStepPod(t, []oldetcd.Member{m}, 0)
	p.opts.Step35Binary, p.opts.Step36Binary, p.opts.ImageStepBinaries = "", "", nil
	err := wrapper.Run(t.Context(), p.opts, testr.New(t))
	g.Expect(err).To(MatchError(etcddata.ErrDataVersion))
	g.Expect(err).To(MatchError(ContainSubstring("--step-etcd-3.6-binary")))
	after, _ := etcddata.InspectDataVersion(m.DataDir)
	g.Expect(after).To(Equal(before))
}

// startOldCluster starts every member at once: each is ready (answers /health) only once a quorum runs.
func startOldCluster(t *testing.T, version string, members []oldetcd.Member, extra ...string) []*oldetcd.Server {
	t.Helper()
	servers := make([]*oldetcd.Server, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { servers[i], errs[i] = oldetcd.Start(version, m, extra...) })
	}
	wg.Wait()
	for _, s := range servers {
		if s != nil {
			t.Cleanup(s.Kill)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return servers
}

// stepPod is our pod of member i: the sidecar's HTTP API with the real initializer, serving the member's
// configuration, and this wrapper with the older etcd binaries.
type stepPod struct {
	t    *testing.T
	opts wrapper.Options
	stop func() // ends the wrapper (SIGTERM) and waits for it
	mu   sync.Mutex
	runs int
}

func newStepPod(t *testing.T, members []oldetcd.Member, i int) *stepPod {
	t.Helper()
	m := members[i]
	var initial memberconfig.InitialCluster
	for _, o := range members {
		initial = append(initial, memberconfig.ClusterMember{Name: o.Name, PeerURLs: []string{o.PeerURL}})
	}
	in, err := initializer.New(initializer.Options{
		Member:         memberconfig.Member{Name: m.Name, PeerURLs: []string{m.PeerURL}, ClientURLs: []string{m.ClientURL}},
		InitialCluster: initial, DataDir: m.DataDir, ClusterToken: oldetcd.ClusterToken,
		ClusterEndpoints: oldetcd.ClientURLs(members), ProbeTimeout: 2 * time.Second, Log: testr.New(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	config, err := yaml.Marshal(map[string]any{
		"name": m.Name, "data-dir": m.DataDir,
		"listen-client-urls": m.ClientURL, "advertise-client-urls": m.ClientURL,
		"listen-peer-urls": m.PeerURL, "initial-advertise-peer-urls": m.PeerURL,
		"initial-cluster": m.InitialCluster(), "initial-cluster-state": "new", "initial-cluster-token": oldetcd.ClusterToken,
		"quota-backend-bytes": int64(8) << 30,
	})
	if err != nil {
		t.Fatal(err)
	}
	api := httpapi.New(t.Context(), httpapi.Options{
		Initializer: in, Config: func(context.Context) ([]byte, error) { return config, nil }, Log: testr.New(t),
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); _ = api.Serve(ctx, l, "", "") }()
	t.Cleanup(func() { cancel(); <-served })

	o := wrapper.DefaultOptions()
	o.BackupRestoreHostPort = l.Addr().String()
	o.WrapperPort = freeport.Port(t)
	o.ListenHost = "127.0.0.1"
	o.MarkerDir = t.TempDir()
	o.PollInterval = 100 * time.Millisecond
	o.EtcdLogger = zap.NewNop()
	o.StepOutput = io.Discard
	if o.Step35Binary, err = oldetcd.Binary("3.5"); err != nil {
		t.Fatal(err)
	}
	if o.Step36Binary, err = oldetcd.Binary("3.6"); err != nil {
		t.Fatal(err)
	}
	return &stepPod{t: t, opts: o}
}

// startStepPod runs the pod's wrapper until the test ends; an exit counts as a restart (restarts).
func startStepPod(t *testing.T, members []oldetcd.Member, i int) *stepPod {
	p := newStepPod(t, members, i)
	p.start(i)
	return p
}

// start runs the wrapper of member i with p.opts until the test ends, again after every exit (the
// kubelet's restart), each exit counted (restarts).
func (p *stepPod) start(i int) {
	t := p.t
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			err := wrapper.Run(ctx, p.opts, testr.New(t))
			if ctx.Err() != nil {
				return
			}
			p.mu.Lock()
			p.runs++
			p.mu.Unlock()
			t.Logf("wrapper of member %d exited: %v", i, err)
			time.Sleep(time.Second) // the kubelet's back-off, shortened
		}
	}()
	var once sync.Once
	p.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(p.stop)
}

func (p *stepPod) restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs
}

func (p *stepPod) readyz() int {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", p.opts.WrapperPort))
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func serverVersion(t *testing.T, m oldetcd.Member) string {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err.Error()
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	st, err := cli.Status(ctx, m.ClientURL)
	if err != nil {
		return err.Error()
	}
	return st.Version
}

// writer puts keys /writer/<n> through every member's client URL, one at a time, and remembers which
// were acknowledged.
type writer struct {
	cli    *clientv3.Client
	cancel context.CancelFunc
	done   chan struct{}
	// gate is held around each write, and by holdDurably to keep writes out.
	gate   sync.Mutex
	mu     sync.Mutex
	acked  []string
	failed int
}

// holdDurably runs fn (a SIGKILL of a single-member cluster) between writes, after every write acknowledged
// so far is on disk. etcd releases before 3.4.21 and 3.5.5 acknowledge a write of a single-member cluster
// while its WAL entry may still be unwritten (etcd's CHANGELOG-3.4, v3.4.21: "Durability API guarantee
// broken in single node cluster"), so a SIGKILL can take the last acknowledged write with it before any code of
// this project runs. A sentinel write after the writer's last one closes that window: raft hands the
// server the sentinel only once the entries before it were saved, so its acknowledgement means every
// earlier write is durable (the sentinel itself is not checked).
func (w *writer) holdDurably(t *testing.T, fn func()) {
	t.Helper()
	w.gate.Lock()
	defer w.gate.Unlock()
	attempt, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := w.cli.Put(attempt, "/sentinel", "after the acknowledged writes"); err != nil {
		t.Fatalf("sentinel write before the kill: %v", err)
	}
	fn()
}

const writerPrefix = "/writer/"

func startWriter(t *testing.T, endpoints []string) *writer {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &writer{cli: cli, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for n := 0; ctx.Err() == nil; n++ {
			key := fmt.Sprintf("%s%07d", writerPrefix, n)
			w.gate.Lock()
			attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
			_, err := cli.Put(attempt, key, key)
			cancelAttempt()
			w.gate.Unlock()
			w.mu.Lock()
			if err == nil {
				w.acked = append(w.acked, key)
			} else if !errors.Is(ctx.Err(), context.Canceled) {
				w.failed++
			}
			w.mu.Unlock()
			if err != nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	t.Cleanup(func() { w.stop(); _ = cli.Close() })
	return w
}

// waitFor waits until n more writes were acknowledged.
func (w *writer) waitFor(g Gomega, n int) {
	w.mu.Lock()
	want := len(w.acked) + n
	w.mu.Unlock()
	g.Eventually(func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.acked)
	}, 2*time.Minute, 50*time.Millisecond).Should(BeNumerically(">=", want), "the writer makes progress")
}

func (w *writer) stop() (acked, failed int) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked), w.failed
}

// checkAcknowledged expects every acknowledged write with its value (missing).
func (w *writer) checkAcknowledged(g Gomega) {
	var missing []string
	g.Eventually(func() []string {
		missing = w.missing(context.Background())
		return missing
	}, time.Minute, 200*time.Millisecond).ShouldNot(ContainElement(readFailed))
	g.Expect(missing).To(BeEmpty(), "acknowledged writes missing")
}

// missingRetrying is missing, asked again while the read fails (a member restarting, a busy machine) for
// up to a minute.
func (w *writer) missingRetrying(ctx context.Context) []string {
	deadline := time.Now().Add(time.Minute)
	for {
		missing := w.missing(ctx)
		if len(missing) != 1 || missing[0] != readFailed || time.Now().After(deadline) || ctx.Err() != nil {
			return missing
		}
		time.Sleep(200 * time.Millisecond) // a member restarts in about a second
	}
}

// readFailed is what missing returns when the keys could not be read.
const readFailed = "read failed"

// missingOn is missing for one member's own data: a serializable read through its client URL alone.
func (w *writer) missingOn(endpoint string) []string {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return []string{readFailed}
	}
	defer cli.Close()
	return w.missingWith(context.Background(), cli, clientv3.WithSerializable())
}

// missing reads every key (linearizable) and returns the acknowledged writes it does not find with their
// value, or "read failed".
func (w *writer) missing(ctx context.Context) []string { return w.missingWith(ctx, w.cli) }

func (w *writer) missingWith(ctx context.Context, cli *clientv3.Client, opts ...clientv3.OpOption) []string {
	w.mu.Lock()
	acked := append([]string(nil), w.acked...)
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, writerPrefix, append(opts, clientv3.WithPrefix())...)
	if err != nil {
		return []string{readFailed}
	}
	have := map[string]string{}
	for _, kv := range resp.Kvs {
		have[string(kv.Key)] = string(kv.Value)
	}
	var missing []string
	for _, k := range acked {
		if have[k] != k {
			missing = append(missing, k)
		}
	}
	return missing
}
