package sidecar

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/sidecar"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/role"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

const (
	etcdName      = "etcd-main"
	fullLease     = "etcd-main-full-snap"
	deltaLease    = "etcd-main-delta-snap"
	storePrefix   = "etcd-main"
	storeBucket   = "bkp"
	deltaPeriod   = time.Second
	reelectPeriod = 200 * time.Millisecond
)

// cluster is an Etcd of n pods in one namespace with one Local store.
type cluster struct {
	t         *testing.T
	namespace string
	kube      kubernetes.Interface
	store     snapstore.Config
	pods      []*pod
	// prefix is the Etcd's spec.memberNamePrefix ("" for none).
	prefix string
	// name is the Etcd's name; its pods are <name>-<i>.
	name string
	// join is the Etcd's spec.etcd.bootstrapWithExistingCluster (nil for none).
	join *druidv1alpha1.BootstrapWithExistingCluster
}

// pod is one etcd pod: its identity and volumes survive restarts of its containers.
type pod struct {
	t            *testing.T
	name         string
	client, peer url.URL
	dataDir      string
	sidecar      sidecar.Options
	wrapper      wrapper.Options
	// sidecarLog keeps what the pod's sidecar logged, across its restarts.
	sidecarLog *sidecarLog

	mu          sync.Mutex
	stopSidecar func()
	stopWrapper func()
}

func freePort(t *testing.T) int { return freeport.Port(t) }

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	return newPrefixedCluster(t, n, "")
}

// newPrefixedCluster is newCluster for an Etcd with spec.memberNamePrefix: the template is rendered with
// it, as druid renders it.
func newPrefixedCluster(t *testing.T, n int, prefix string) *cluster {
	t.Helper()
	return newEtcdCluster(t, etcdName, n, prefix, nil)
}

// newEtcdCluster is an Etcd named name of n pods in a namespace of its own; join, when set, is its
// spec.etcd.bootstrapWithExistingCluster: the template names the source members as druid renders them, and
// the sidecars get the source's client endpoints as --service-endpoints, as druid passes them.
func newEtcdCluster(t *testing.T, name string, n int, prefix string, join *druidv1alpha1.BootstrapWithExistingCluster) *cluster {
	t.Helper()
	c := &cluster{t: t, namespace: env.CreateNamespace(t), kube: kubernetes.NewForConfigOrDie(env.Config), prefix: prefix, name: name, join: join}
	sidecarKube := c.etcdServiceAccountClient()
	c.store = snapstore.Config{Provider: druidv1alpha1.StorageProviderLocal, Container: storeBucket, Prefix: storePrefix, LocalRoot: t.TempDir()}
	for _, name := range []string{fullLease, deltaLease} {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.namespace}}
		if _, err := c.kube.CoordinationV1().Leases(c.namespace).Create(t.Context(), lease, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		dir := t.TempDir()
		p := &pod{t: t, name: fmt.Sprintf("%s-%d", name, i), client: etcdserver.FreeURL(t), peer: etcdserver.FreeURL(t),
			dataDir: filepath.Join(dir, "new.etcd"), sidecarLog: &sidecarLog{t: t}}
		wrapperPort := freePort(t)
		o := sidecar.DefaultOptions()
		o.Pod, o.Namespace, o.TemplatePath = p.name, c.namespace, filepath.Join(dir, "etcd.conf.yaml")
		o.Endpoints, o.DataDir = []string{p.client.String()}, p.dataDir
		o.ServerPort = freePort(t)
		o.EtcdWrapperPort = wrapperPort
		o.Store, o.Compression = c.store, snapshot.CompressionGzip
		// No cron full snapshots: the test decides when full snapshots happen besides the first one.
		o.Schedule, o.DeltaSnapshotPeriod, o.ReelectionPeriod = "", deltaPeriod, reelectPeriod
		o.EnableSnapshotLeaseRenewal, o.FullSnapshotLeaseName, o.DeltaSnapshotLeaseName = true, fullLease, deltaLease
		o.Kubernetes = sidecarKube
		o.SidecarURLOf = c.sidecarURLOf
		if join != nil {
			o.ServiceEndpoints = join.ClientEndpoints
		}
		p.sidecar = o
		w := wrapper.DefaultOptions()
		w.BackupRestoreHostPort = "127.0.0.1:" + strconv.Itoa(o.ServerPort)
		w.WrapperPort, w.ListenHost, w.MarkerDir = wrapperPort, "127.0.0.1", dir
		w.PollInterval, w.EtcdLogger = 50*time.Millisecond, zap.NewNop()
		p.wrapper = w
		c.pods = append(c.pods, p)
	}
	for _, p := range c.pods {
		c.writeTemplate(p)
	}
	t.Cleanup(func() {
		for _, p := range c.pods {
			p.stop()
		}
	})
	return c
}

// renewMemberLeases creates the member leases druid creates (empty, named after the members) and has every
// sidecar renew its own, as druid's pods do: the holder identity then records each member's ID and its
// cluster's ID.
func (c *cluster) renewMemberLeases() {
	c.t.Helper()
	for _, p := range c.pods {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: p.memberName(c.prefix), Namespace: c.namespace}}
		if _, err := c.kube.CoordinationV1().Leases(c.namespace).Create(c.t.Context(), lease, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
		p.sidecar.EnableMemberLeaseRenewal, p.sidecar.HeartbeatDuration = true, time.Second
	}
}

// recreateMemberLeases replaces every member lease with an empty one, as a hibernated Etcd's wake-up finds
// them: they record no member and no cluster, and carry only the given druid marks (annotations "true").
func (c *cluster) recreateMemberLeases(marks ...string) {
	c.t.Helper()
	for _, p := range c.pods {
		leases := c.kube.CoordinationV1().Leases(c.namespace)
		if err := leases.Delete(c.t.Context(), p.memberName(c.prefix), metav1.DeleteOptions{}); err != nil {
			c.t.Fatal(err)
		}
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: p.memberName(c.prefix), Namespace: c.namespace}}
		for _, mark := range marks {
			metav1.SetMetaDataAnnotation(&lease.ObjectMeta, mark, "true")
		}
		if _, err := leases.Create(c.t.Context(), lease, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
	}
}

// memberName is the pod's etcd member name, which is also its member lease's name.
func (p *pod) memberName(prefix string) string { return memberconfig.MemberName(prefix, p.name) }

// etcdServiceAccountClient is the client the sidecars call the apiserver with: the etcd pods' service
// account, bound to the Role druid renders for our sidecar (role.OurRules), as in a seed. The tests' own
// client (c.kube) stays the administrator's.
func (c *cluster) etcdServiceAccountClient() kubernetes.Interface {
	c.t.Helper()
	ctx, ns := c.t.Context(), c.namespace
	must := func(_ any, err error) {
		if err != nil {
			c.t.Fatal(err)
		}
	}
	must(c.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: etcdName}}, metav1.CreateOptions{}))
	name := "druid.gardener.cloud:etcd:" + etcdName
	must(c.kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: role.OurRules()}, metav1.CreateOptions{}))
	must(c.kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: etcdName, Namespace: ns}},
	}, metav1.CreateOptions{}))
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + etcdName,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// startAll starts every pod, waits until each is ready and returns a client of the whole cluster.
func (c *cluster) startAll() *clientv3.Client {
	c.t.Helper()
	for _, p := range c.pods {
		p.start()
	}
	var endpoints []string
	for _, p := range c.pods {
		NewWithT(c.t).Eventually(p.ready, 3*time.Minute, 200*time.Millisecond).Should(BeTrue(), p.name)
		endpoints = append(endpoints, p.client.String())
	}
	return etcdserver.NewClient(c.t, endpoints...)
}

// writeTemplate writes druid's template for the Etcd with the test's addresses; listen URLs are the
// pod's own, as every pod has its own network namespace in a real cluster.
func (c *cluster) writeTemplate(p *pod) {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: c.namespace}}
	e.Spec.Replicas = int32(len(c.pods))
	if c.prefix != "" {
		e.Spec.MemberNamePrefix = &c.prefix
	}
	e.Spec.Etcd.BootstrapWithExistingCluster = c.join
	druidv1alpha1.SetDefaults(e)
	tmpl := configmap.NewTemplate(e)
	// druid's entries after the pods' own: the members of an existing cluster the Etcd joins.
	sourceEntries := strings.Split(tmpl.InitialCluster, ",")[len(c.pods):]
	tmpl.DataDir = p.dataDir
	tmpl.ListenClientURLs, tmpl.ListenPeerURLs = p.client.String(), p.peer.String()
	tmpl.AdvertiseClientURLs, tmpl.InitialAdvertisePeerURLs = map[string][]string{}, map[string][]string{}
	var initial []string
	for _, o := range c.pods {
		tmpl.AdvertiseClientURLs[o.name] = []string{o.client.String()}
		tmpl.InitialAdvertisePeerURLs[o.name] = []string{o.peer.String()}
		initial = append(initial, o.name+"="+o.peer.String())
	}
	tmpl.InitialCluster = strings.Join(append(initial, sourceEntries...), ",")
	out, err := yaml.Marshal(tmpl)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p.sidecar.TemplatePath, out, 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// sidecarURLOf maps a member's client URL to its sidecar (all pods share 127.0.0.1 here).
func (c *cluster) sidecarURLOf(clientURL string) (string, error) {
	for _, p := range c.pods {
		if p.client.String() == clientURL {
			return p.sidecarURL(), nil
		}
	}
	return "", fmt.Errorf("no pod has client URL %s", clientURL)
}

func (p *pod) sidecarURL() string { return "http://127.0.0.1:" + strconv.Itoa(p.sidecar.ServerPort) }

// start runs both containers; the wrapper is restarted whenever it exits, like by the kubelet.
func (p *pod) start() { p.startWith(p.startWrapper) }

// startWith runs the sidecar and, as the etcd container, what etcdContainer starts (it returns the
// container's stop).
func (p *pod) startWith(etcdContainer func() func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sctx, scancel := context.WithCancel(context.Background())
	sdone := make(chan struct{})
	go func() {
		defer close(sdone)
		if err := sidecar.Run(sctx, p.sidecar, testr.NewWithInterface(p.sidecarLog, testr.Options{}).WithName(p.name+"/sidecar")); err != nil {
			p.t.Errorf("%s sidecar: %v", p.name, err)
		}
	}()
	p.stopSidecar = func() { scancel(); <-sdone }
	p.stopWrapper = etcdContainer()
}

func (p *pod) startWrapper() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := wrapper.Run(ctx, p.wrapper, testr.New(p.t).WithName(p.name+"/wrapper")); err != nil && ctx.Err() == nil {
				p.t.Logf("%s wrapper exited: %v; restarting", p.name, err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// stopEtcd stops the etcd container only (the member goes away, its sidecar keeps running).
func (p *pod) stopEtcd() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopWrapper != nil {
		p.stopWrapper()
		p.stopWrapper = nil
	}
}

// stop ends the pod like a deletion: both containers get SIGTERM.
func (p *pod) stop() {
	p.stopEtcd()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopSidecar != nil {
		p.stopSidecar()
		p.stopSidecar = nil
	}
}

// ready asks the wrapper's /readyz, bounded: a wrapper whose etcd hangs while starting must fail the poll,
// not block it.
func (p *pod) ready() bool {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://127.0.0.1:" + strconv.Itoa(p.wrapper.WrapperPort) + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// get calls the pod's sidecar and returns the status code and body.
func (p *pod) get(path string) (int, []byte, error) {
	resp, err := http.Get(p.sidecarURL() + path)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// getJSON calls the sidecar and decodes a 200 answer into v.
func (p *pod) getJSON(path string, v any) error {
	code, body, err := p.get(path)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, code, body)
	}
	return json.Unmarshal(body, v)
}

// snapshots lists the store.
func (c *cluster) snapshots() []*snapshot.Snapshot {
	c.t.Helper()
	s, err := snapstore.New(c.t.Context(), c.store, testr.New(c.t))
	if err != nil {
		c.t.Fatal(err)
	}
	defer s.Close()
	snaps, err := s.List(c.t.Context())
	if err != nil {
		c.t.Fatal(err)
	}
	return snaps
}

// lastOf is the snapshot of kind with the highest last revision, nil if none.
func lastOf(snaps []*snapshot.Snapshot, kind snapshot.Kind) *snapshot.Snapshot {
	var last *snapshot.Snapshot
	for _, s := range snaps {
		if s.Kind == kind && (last == nil || s.LastRevision >= last.LastRevision) {
			last = s
		}
	}
	return last
}

// leaseHolder is the holder identity of a snapshot lease ("" when never renewed).
func (c *cluster) leaseHolder(name string) string {
	l, err := c.kube.CoordinationV1().Leases(c.namespace).Get(c.t.Context(), name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
