package app

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// kubeconfigFor writes a kubeconfig for the test apiserver whose context has namespace (none when empty),
// so the commands are tested through their real --kubeconfig / KUBECONFIG loading.
func kubeconfigFor(t *testing.T, env *envtest.Env, namespace string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData, Token: env.Config.BearerToken}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: namespace}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	NewWithT(t).Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// run executes gardener-etcd in-process and returns stdout and stderr.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewRootCommand(&out, &errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	t.Logf("gardener-etcd %v (err %v):\n%s%s", args, err, out.String(), errOut.String())
	return out.String(), errOut.String(), err
}

// tableRow matches a table row by its cells separated by the table's padding; a cell is a regular
// expression.
func tableRow(cells ...string) *regexp.Regexp {
	pattern := `(?m)^`
	for i, c := range cells {
		if i > 0 {
			pattern += `\s+`
		}
		pattern += c
	}
	return regexp.MustCompile(pattern + `\s*$`)
}

// createEtcd creates a minimal Etcd with replicas and writes status as druid would.
func createEtcd(t *testing.T, env *envtest.Env, namespace, name string, replicas int32, annotations map[string]string, status druidv1alpha1.EtcdStatus) *druidv1alpha1.Etcd {
	t.Helper()
	g := NewWithT(t)
	etcd := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Spec:       druidv1alpha1.EtcdSpec{Labels: map[string]string{"role": name}, Replicas: replicas},
	}
	g.Expect(env.Client.Create(context.Background(), etcd)).To(Succeed())
	etcd.Status = status
	g.Expect(env.Client.Status().Update(context.Background(), etcd)).To(Succeed())
	return etcd
}

// createSnapshotLease writes a snapshot lease as the backup leader's sidecar renews it: holderIdentity is
// the snapshot's last revision, renewTime when it recorded it.
func createSnapshotLease(t *testing.T, env *envtest.Env, namespace, name string, revision string, at time.Time, annotations map[string]string) {
	t.Helper()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(revision), RenewTime: &metav1.MicroTime{Time: at}},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), lease)).To(Succeed())
}

func getEtcd(t *testing.T, env *envtest.Env, namespace, name string) *druidv1alpha1.Etcd {
	t.Helper()
	etcd := &druidv1alpha1.Etcd{}
	NewWithT(t).Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, etcd)).To(Succeed())
	return etcd
}

func condition(t druidv1alpha1.ConditionType, status druidv1alpha1.ConditionStatus, reason string) druidv1alpha1.Condition {
	now := metav1.Now()
	return druidv1alpha1.Condition{Type: t, Status: status, Reason: reason, Message: reason, LastTransitionTime: now, LastUpdateTime: now}
}

func member(name, id string, role druidv1alpha1.EtcdRole, status druidv1alpha1.EtcdMemberConditionStatus, reason string) druidv1alpha1.EtcdMemberStatus {
	return druidv1alpha1.EtcdMemberStatus{Name: name, ID: ptr.To(id), Role: ptr.To(role), Status: status, Reason: reason,
		LastTransitionTime: metav1.NewTime(time.Now().Add(-3 * time.Hour))}
}
