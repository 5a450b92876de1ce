package command

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/cmd/etcd-druid/app"
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenlet"
)

const (
	timeout = 60 * time.Second
	poll    = 200 * time.Millisecond
)

func freePort(t *testing.T) int { return freeport.Port(t) }

// commandStarted is set once the command ran in this test binary. controller-runtime keeps the names of
// the controllers it built in a process-wide set (their metrics are labelled by name), so a second
// command in the same process fails with "controller with name etcd already exists", as with -count=2.
var commandStarted atomic.Bool

// The command, started with an OperatorConfiguration file like upstream druid's and flags on top, elects
// itself leader under the file's lease name, reports ready only
// with its webhook server up, reconciles an Etcd into a StatefulSet, protects it through its webhook, and on cancellation (what SIGTERM does in main) returns without error and releases
// the leader election Lease.
func TestCommandReconcilesAndShutsDownCleanly(t *testing.T) {
	if commandStarted.Swap(true) {
		t.Skip("the command already ran in this test binary; controller names are unique per process (-count > 1)")
	}
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	const leaseName = "druid-leader-from-config"
	// Druid runs as the service account its configuration names (serviceAccountInfo below), bound to
	// gardenlet's ClusterRole: its protection webhook lets only that user change the components.
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}))).To(Succeed())
	identity, err := gardenlet.DruidIdentity(ctx, env.Client, env.Config, "garden")
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(gardenlet.WriteKubeconfig(identity, kubeconfig)).To(Succeed())
	probe := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	wh := env.WebhookInstallOptions

	// Upstream druid's OperatorConfiguration carries the controller, webhook and leader election
	// settings; the settings it has no field for, and the metrics address (to switch metrics off, which the
	// file cannot), are flags, which win over the file.
	operatorConfig := filepath.Join(t.TempDir(), "config.yaml")
	g.Expect(os.WriteFile(operatorConfig, []byte(fmt.Sprintf(`apiVersion: config.druid.gardener.cloud/v1alpha1
kind: OperatorConfiguration
leaderElection: {enabled: true, resourceName: %s, leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s, resourceLock: leases}
server:
  webhooks: {bindAddress: %q, port: %d, serverCertDir: %q}
  metrics: {port: 8080}
controllers:
  etcd: {concurrentSyncs: 2, etcdStatusSyncPeriod: 2s}
  compaction: {enabled: false, metricsScrapeWaitDuration: 0s}
webhooks:
  etcdComponentProtection: {enabled: true, serviceAccountInfo: {name: etcd-druid, namespace: garden}}
logConfiguration: {logLevel: info, logFormat: json}
`, leaseName, wh.LocalServingHost, wh.LocalServingPort, wh.LocalServingCertDir)), 0o600)).To(Succeed())

	cmd := app.NewCommand()
	cmd.SetArgs([]string{
		"--config=" + operatorConfig,
		"--kubeconfig=" + kubeconfig,
		"--leader-election-namespace=" + ns,
		"--metrics-bind-address=0", "--health-probe-bind-address=" + probe,
		"--etcd-wrapper-image=example.org/etcd-wrapper:v1", "--backup-restore-image=example.org/etcdbrctl:v1",
		"--graceful-shutdown-timeout=10s", "--zap-log-level=error",
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(runCtx) }()

	g.Eventually(func(g Gomega) {
		select {
		case err := <-done:
			StopTrying("the command returned before it was ready").Wrap(err).Now()
		default:
		}
		for _, path := range []string{"/healthz", "/readyz"} {
			resp, err := http.Get("http://" + probe + path)
			g.Expect(err).NotTo(HaveOccurred())
			_ = resp.Body.Close()
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK), path)
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	lease := &coordinationv1.Lease{}
	g.Eventually(func(g Gomega) string {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
		return ptr.Deref(lease.Spec.HolderIdentity, "")
	}).WithTimeout(timeout).WithPolling(poll).ShouldNot(BeEmpty())

	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: ns},
		Spec: druidv1alpha1.EtcdSpec{Labels: map[string]string{"role": "main"}, Replicas: 1}}
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	g.Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-main"}, sts)).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())
		g.Expect(etcd.Status.ObservedGeneration).To(Equal(ptr.To(etcd.Generation)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The protection webhook the command serves denies anyone but druid deleting a component.
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: ns}}
	err = env.Client.Delete(ctx, sts)
	g.Expect(err).To(HaveOccurred(), "deleting druid's StatefulSet as someone else")
	g.Expect(err.Error()).To(ContainSubstring(druidv1alpha1.DisableEtcdComponentProtectionAnnotation))

	cancel()
	select {
	case err := <-done:
		g.Expect(err).NotTo(HaveOccurred())
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not return within 30s of cancellation")
	}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
	g.Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).To(BeEmpty(), fmt.Sprintf("lease released on shutdown: %+v", lease.Spec))
	_, err = http.Get("http://" + probe + "/healthz")
	g.Expect(err).To(HaveOccurred(), "the probe server is stopped")
}
