package etcd_test

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gardener-etcd/gardener-etcd/cmd/gardener-etcd/app"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
)

// writeKubeconfig writes a kubeconfig for the test apiserver, so the CLI is tested through its real flag.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData, Token: env.Config.BearerToken}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	NewWithT(t).Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// gardenerEtcd runs the CLI in-process and returns its output.
func gardenerEtcd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := app.NewRootCommand(&out, &errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	t.Logf("gardener-etcd %v:\n%s%s", args, out.String(), errOut.String())
	return out.String(), err
}

// row matches a table row by its cells separated by the table's padding.
func row(cells ...string) *regexp.Regexp {
	pattern := `(?m)^`
	for i, c := range cells {
		if i > 0 {
			pattern += `\s+`
		}
		pattern += regexp.QuoteMeta(c)
	}
	return regexp.MustCompile(pattern + `\s*$`)
}

func TestShootCommandsDeployScaleAndDestroyPrintingTheEtcds(t *testing.T) {
	g := NewWithT(t)
	s := newShoot(t)
	runDruid(t, s.namespace)
	kubeconfig := writeKubeconfig(t)
	common := []string{"--namespace", s.namespace, "--kubeconfig", kubeconfig, "--timeout", "30s", "--poll-interval", "100ms"}

	out, err := gardenerEtcd(t, append([]string{"shoot", "deploy", "--backup-entry", s.entry}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("Waiting for BackupEntry " + s.entry + ", then deploying etcd-main in " + s.namespace))
	g.Expect(out).To(ContainSubstring("etcd-main is ready"))
	g.Expect(out).To(ContainSubstring("etcd-events is ready"))
	g.Expect(out).To(MatchRegexp(`(?m)^NAME\s+READY\s+ALL MEMBERS READY\s+BACKUP READY\s+REPLICAS\s+MEMBERS$`))
	g.Expect(out).To(MatchRegexp(row("etcd-events", "True", "True", "-", "1/1", "etcd-events-0:Ready:Leader").String()))
	g.Expect(out).To(MatchRegexp(row("etcd-main", "True", "True", "True", "1/1", "etcd-main-0:Ready:Leader").String()))
	be := getEntry(g, s.entry)
	g.Expect(be.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateSucceeded))
	g.Expect(getEtcd(g, s.namespace, "etcd-main").Spec.Backup.Store.SecretRef).To(Equal(be.Status.EtcdBackupSecretRef))

	out, err = gardenerEtcd(t, append([]string{"shoot", "scale", "--role", "main", "--replicas", "3"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(row("etcd-main", "True", "True", "True", "3/3", "etcd-main-0:Ready:Leader,etcd-main-1:Ready:Member,etcd-main-2:Ready:Member").String()))
	g.Expect(getEtcd(g, s.namespace, "etcd-main").Spec.Etcd.PeerUrlTLS).NotTo(BeNil())
	g.Expect(getEtcd(g, s.namespace, "etcd-events").Spec.Replicas).To(Equal(int32(1)), "--role main leaves etcd-events alone")

	out, err = gardenerEtcd(t, append([]string{"shoot", "destroy"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("Waiting for etcd-main to be gone"))
	g.Expect(out).To(ContainSubstring("No Etcds in " + s.namespace + "."))
}

func TestShootCommandsReportFailuresWithTheTable(t *testing.T) {
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	kubeconfig := writeKubeconfig(t)
	common := []string{"--namespace", namespace, "--kubeconfig", kubeconfig, "--timeout", "500ms", "--poll-interval", "100ms"}

	_, err := gardenerEtcd(t, append([]string{"shoot", "deploy", "--role", "primary"}, common...)...)
	g.Expect(err).To(MatchError(ContainSubstring(`--role must be main or events, not "primary"`)))

	// No druid: the Etcd is written, the wait times out and says why, the table shows the state.
	out, err := gardenerEtcd(t, append([]string{"shoot", "deploy", "--role", "events"}, common...)...)
	g.Expect(err).To(MatchError(ContainSubstring("annotation gardener.cloud/operation=reconcile is still set")))
	g.Expect(out).To(MatchRegexp(row("etcd-events", "-", "-", "-", "0/1", "-").String()))

	// The BackupEntry never appears.
	_, err = gardenerEtcd(t, append([]string{"shoot", "deploy", "--role", "main", "--backup-entry", namespace + "--nope"}, common...)...)
	g.Expect(err).To(MatchError(ContainSubstring("BackupEntry " + namespace + "--nope not reconciled")))

	_, err = gardenerEtcd(t, "shoot", "scale", "--kubeconfig", kubeconfig, "--replicas", "3")
	g.Expect(err).To(MatchError(ContainSubstring(`required flag(s) "namespace" not set`)))
}

// Through a port-forward the sidecar is reached on 127.0.0.1, which the server certificate carries.
func TestShootSnapshotCommandThroughALocalAddress(t *testing.T) {
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	_, err := etcd.NewTLSSecrets(env.Client, namespace, etcd.TLSValues{Role: etcd.RoleMain}).Ensure(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	s := sidecar(t, namespace, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"snapName":"Full-00000000-00000007-1"}`))
	})
	out, err := gardenerEtcd(t, "shoot", "snapshot", "--namespace", namespace, "--kubeconfig", writeKubeconfig(t), "--url", s.URL)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("Requesting a full snapshot of etcd-main in " + namespace))
	g.Expect(out).To(ContainSubstring(`Snapshot taken: {"snapName":"Full-00000000-00000007-1"}`))
}

// The shoot flow retries Deploy until etcd-backup exists; the CLI does the same and says what it waits for.
func TestShootDeployRetriesUntilTheBackupSecretExists(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	runDruid(t, namespace)
	// An entry reconciled by an older extension (type gcp: no controller here) whose secret is not there yet.
	entry := legacyEntry(t, namespace, "gcp")

	var out childproc.SyncBuffer
	cmd := app.NewRootCommand(&out, &out)
	cmd.SetArgs([]string{"shoot", "deploy", "--role", "main", "--backup-entry", entry, "--namespace", namespace,
		"--kubeconfig", writeKubeconfig(t), "--timeout", "30s", "--poll-interval", "100ms"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	g.Eventually(out.String, timeout, interval).Should(ContainSubstring("secret " + namespace + "/etcd-backup is missing"))
	g.Expect(etcdExists(namespace, "etcd-main")).To(BeFalse())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: namespace},
		Data:       map[string][]byte{"bucketName": []byte("gcs-bucket"), "serviceaccount.json": []byte("{}")},
	})).To(Succeed())
	g.Eventually(done, timeout).Should(Receive(BeNil()))
	t.Log(out.String())
	g.Expect(out.String()).To(MatchRegexp(row("etcd-main", "True", "True", "True", "1/1", "etcd-main-0:Ready:Leader").String()))
	g.Expect(*getEtcd(g, namespace, "etcd-main").Spec.Backup.Store.Container).To(Equal("gcs-bucket"))
}
