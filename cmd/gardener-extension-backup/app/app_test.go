package app_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-etcd/gardener-etcd/cmd/gardener-extension-backup/app"
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/backupvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/ensureetcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhookcert"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }

func freePort(t *testing.T) int { return freeport.Port(t) }

// commandStarted is set once the command ran in this test binary. controller-runtime keeps the names of
// the controllers it built in a process-wide set (their metrics are labelled by name), so a second
// command in the same process fails with "controller with name … already exists", as with -count=2.
var commandStarted atomic.Bool

// TestCommandRunsAndShutsDownCleanly executes the real command against envtest: the controllers reconcile a
// local BackupBucket, the webhook server (with a certificate from the flags' cert dir) defaults an Etcd and
// refuses a hostile BackupEntry through the apiserver, readyz answers, and cancelling the context ends the
// command without error.
func TestCommandRunsAndShutsDownCleanly(t *testing.T) {
	if commandStarted.Swap(true) {
		t.Skip("the command already ran in this test binary; controller names are unique per process (-count > 1)")
	}
	g := NewWithT(t)
	ctx := context.Background()
	user, err := env.AddUser(ctrlenvtest.User{Name: "gardener-extension-backup", Groups: []string{"system:masters"}}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfigData, err := user.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, kubeconfigData, 0o600)).To(Succeed())
	certDir := filepath.Join(dir, "certs")
	g.Expect(os.Mkdir(certDir, 0o700)).To(Succeed())
	bundle, err := webhookcert.Generate([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Now(), time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bundle.WriteDir(certDir)).To(Succeed())
	localRoot := filepath.Join(dir, "buckets")
	g.Expect(os.Mkdir(localRoot, 0o700)).To(Succeed())

	webhookPort, healthPort := freePort(t), freePort(t)
	cmd := app.NewCommand()
	var stderr bytes.Buffer
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(healthPort),
		"--local-root", localRoot,
		"--provider-types", "local",
		"--workers", "2",
		"--webhook-port", strconv.Itoa(webhookPort),
		"--webhook-cert-dir", certDir,
		"--etcd-main-storage-class", "from-flags",
		"--etcd-main-storage-capacity", "33Gi",
	})
	// The command binds all interfaces unless told otherwise; that is fine here and what the chart relies on.
	cmdCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var cmdErr error
	go func() { defer close(done); cmdErr = cmd.ExecuteContext(cmdCtx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
	})

	g.Eventually(func() (int, error) {
		select {
		case <-done:
			StopTrying("the command returned before it was ready: " + stderr.String()).Wrap(cmdErr).Now()
		default:
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}, 30*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK))

	// Controllers: a local bucket is created on disk and reported Succeeded.
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bucket-cmd", Namespace: "garden"}})).To(Succeed())
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: "cmd"},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "local"},
			Region:      "local",
			SecretRef:   corev1.SecretReference{Name: "bucket-cmd", Namespace: "garden"},
		},
	}
	g.Expect(env.Client.Create(ctx, bb)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bb), bb)).To(Succeed())
		g.Expect(bb.Status.LastOperation).NotTo(BeNil())
		g.Expect(bb.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateSucceeded))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(filepath.Join(localRoot, "cmd")).To(BeADirectory())

	// Webhook: registered with the apiserver at the command's port, verified with the flags' certificate.
	webhookCfg := ensureetcd.WebhookConfiguration(admissionregistrationv1.ServiceReference{}, nil)
	webhookCfg.Name = "cmd-test-ensure-etcd"
	webhookCfg.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{
		URL:      ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", webhookPort, ensureetcd.Path)),
		CABundle: bundle.CACert,
	}
	g.Expect(env.Client.Create(ctx, webhookCfg)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), webhookCfg) })
	ns := env.CreateNamespace(t)
	g.Eventually(func(g Gomega) {
		etcd := minimalEtcd(ns)
		g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, etcd))).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())
		g.Expect(etcd.Spec.StorageClass).To(Equal(ptr.To("from-flags")))
		g.Expect(etcd.Spec.StorageCapacity.String()).To(Equal("33Gi"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	// Validation webhook: a BackupEntry whose name leads to kube-system is refused with the field named.
	validationCfg := backupvalidation.WebhookConfiguration(admissionregistrationv1.ServiceReference{}, nil, []string{"local"})
	validationCfg.Name = "cmd-test-validation"
	for i, path := range []string{backupvalidation.BackupEntryPath, backupvalidation.BackupBucketPath} {
		validationCfg.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{
			URL:      ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", webhookPort, path)),
			CABundle: bundle.CACert,
		}
	}
	g.Expect(env.Client.Create(ctx, validationCfg)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), validationCfg) })
	g.Eventually(func(g Gomega) {
		entry := "kube-system--6f1c2e4a-0b7d-4a52-9a3e-1d2c3b4a5f60"
		err := env.Client.Create(ctx, &extensionsv1alpha1.BackupEntry{
			ObjectMeta: metav1.ObjectMeta{Name: entry},
			Spec: extensionsv1alpha1.BackupEntrySpec{
				DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "local"}, Region: "local", BucketName: bb.Name,
				SecretRef: corev1.SecretReference{Name: "entry-" + entry, Namespace: "garden"},
			},
		})
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused by the webhook, got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("metadata.name"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	// The serving certificate really is the one from the cert dir.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle.CACert)
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(webhookPort)), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	g.Expect(err).NotTo(HaveOccurred())
	_ = conn.Close()

	cancel()
	select {
	case <-done:
		g.Expect(cmdErr).NotTo(HaveOccurred(), "log:\n%s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("command did not stop within 30s after cancellation; log:\n%s", stderr.String())
	}
	_, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort))
	g.Expect(err).To(HaveOccurred(), "health endpoint still served after shutdown")
}

// minimalEtcd is an etcd-main without storage settings; the schema's defaults fill the rest.
func minimalEtcd(namespace string) *druidv1alpha1.Etcd {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: namespace}}
	etcd.Spec.Replicas = 1
	etcd.Spec.Labels = map[string]string{"app": "etcd"}
	etcd.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "etcd"}}
	return etcd
}

// TestValidateRejectsBadFlags: misconfigurations fail before anything connects to a cluster.
func TestValidateRejectsBadFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown provider":   {"--provider-types", "gcs", "--local-root", "/tmp"},
		"local without root": {"--provider-types", "local"},
		"bad namespace":      {"--provider-types", "s3", "--generated-secret-namespaces", "Not_A_Namespace"},
		"bad capacity":       {"--local-root", "/tmp", "--etcd-main-storage-capacity", "lots"},
		"zero workers":       {"--local-root", "/tmp", "--workers", "0"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := app.NewCommand()
			cmd.SetArgs(append(args, "--kubeconfig", "/does/not/exist"))
			err := cmd.Execute()
			NewWithT(t).Expect(err).To(HaveOccurred())
			NewWithT(t).Expect(err.Error()).NotTo(ContainSubstring("kubeconfig"), "validation must fail before the kubeconfig is read")
		})
	}
}
