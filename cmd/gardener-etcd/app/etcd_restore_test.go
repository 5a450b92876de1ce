package app

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func createBackedUpEtcd(t *testing.T, namespace string) *druidv1alpha1.Etcd {
	t.Helper()
	etcd := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "etcd-main", Labels: map[string]string{"role": "main"},
			Annotations: map[string]string{druidv1alpha1.SuspendEtcdSpecReconcileAnnotation: "investigating the bad write"}},
		Spec: druidv1alpha1.EtcdSpec{Labels: map[string]string{"role": "main"}, Replicas: 3,
			Backup: druidv1alpha1.BackupSpec{Store: &druidv1alpha1.StoreSpec{Prefix: "shoot--dev--a/etcd-main", Container: ptr.To("bucket"),
				Provider: ptr.To(druidv1alpha1.StorageProviderS3), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}}},
	}
	NewWithT(t).Expect(apiserver(t).Client.Create(context.Background(), etcd)).To(Succeed())
	return etcd
}

// `etcd restore-to-revision` creates a new Etcd with the existing one's spec, its own prefix and the restore
// source annotations, and changes nothing of the existing Etcd.
func TestEtcdRestoreToRevisionCreatesTheNewEtcd(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	kubeconfig := kubeconfigFor(t, env, namespace)
	old := createBackedUpEtcd(t, namespace)

	out, _, err := run(t, "etcd", "restore-to-revision", "etcd-main", "--kubeconfig", kubeconfig,
		"--name", "etcd-main-restored", "--prefix", "shoot--dev--a/etcd-main-restored", "--revision", "4711")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("Created Etcd etcd-main-restored in " + namespace + ": it restores etcd-main's backups (prefix shoot--dev--a/etcd-main) up to revision 4711 and backs up under shoot--dev--a/etcd-main-restored.\n"))

	restored := getEtcd(t, env, namespace, "etcd-main-restored")
	g.Expect(restored.Annotations).To(Equal(map[string]string{
		druidv1alpha1.RestoreSourcePrefixAnnotation:   "shoot--dev--a/etcd-main",
		druidv1alpha1.RestoreSourceRevisionAnnotation: "4711",
	}), "the restore annotations only: not the existing Etcd's suspension")
	g.Expect(restored.Labels).To(Equal(old.Labels))
	want := old.Spec.DeepCopy()
	want.Backup.Store.Prefix = "shoot--dev--a/etcd-main-restored"
	g.Expect(restored.Spec).To(Equal(*want), "the existing spec with the new prefix")

	after := getEtcd(t, env, namespace, "etcd-main")
	g.Expect(after.Spec).To(Equal(old.Spec))
	g.Expect(after.Annotations).To(Equal(old.Annotations))
}

// A dry run prints the new Etcd (here as YAML with a time as the point) and creates nothing.
func TestEtcdRestoreToRevisionDryRunPrintsTheEtcd(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	createBackedUpEtcd(t, namespace)

	out, _, err := run(t, "etcd", "restore-to-revision", "etcd-main", "-n", namespace, "--kubeconfig", kubeconfigFor(t, env, ""),
		"--name", "etcd-main-restored", "--prefix", "restored/etcd-main", "--time", "2026-11-28T14:00:00Z", "--dry-run", "-o", "yaml")
	g.Expect(err).NotTo(HaveOccurred())
	printed := &druidv1alpha1.Etcd{}
	g.Expect(yaml.Unmarshal([]byte(out), printed)).To(Succeed())
	g.Expect(printed.Kind).To(Equal("Etcd"))
	g.Expect(printed.Annotations).To(HaveKeyWithValue(druidv1alpha1.RestoreSourceTimeAnnotation, "2026-11-28T14:00:00Z"))
	g.Expect(printed.Spec.Backup.Store.Prefix).To(Equal("restored/etcd-main"))
	err = env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "etcd-main-restored"}, &druidv1alpha1.Etcd{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing created: %v", err)
}

// Refusals name what is wrong before anything is created.
func TestEtcdRestoreToRevisionRefusals(t *testing.T) {
	env := apiserver(t)
	namespace := env.CreateNamespace(t)
	kubeconfig := kubeconfigFor(t, env, namespace)
	createBackedUpEtcd(t, namespace)
	createEtcd(t, env, namespace, "etcd-events", 1, nil, druidv1alpha1.EtcdStatus{})
	base := []string{"etcd", "restore-to-revision", "etcd-main", "--kubeconfig", kubeconfig}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"the source's own prefix": {[]string{"--name", "new", "--prefix", "shoot--dev--a/etcd-main", "--revision", "5"},
			"metadata.annotations[restore.gardener-etcd.io/source-prefix]"},
		"no point":         {[]string{"--name", "new", "--prefix", "p"}, "give exactly one of --revision and --time"},
		"both points":      {[]string{"--name", "new", "--prefix", "p", "--revision", "5", "--time", "2026-11-28T14:00:00Z"}, "give exactly one of --revision and --time"},
		"a bad time":       {[]string{"--name", "new", "--prefix", "p", "--time", "noon"}, "metadata.annotations[restore.gardener-etcd.io/source-time]"},
		"no new name":      {[]string{"--prefix", "p", "--revision", "5"}, "--name of the new Etcd is required"},
		"the existing one": {[]string{"--name", "etcd-main", "--prefix", "p", "--revision", "5"}, "the restore goes into a NEW Etcd"},
		"a name taken":     {[]string{"--name", "etcd-events", "--prefix", "p", "--revision", "5"}, "an Etcd etcd-events already exists"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, append(base, tc.args...)...)
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
	_, _, err := run(t, "etcd", "restore-to-revision", "etcd-events", "--kubeconfig", kubeconfig, "--name", "new", "--prefix", "p", "--revision", "5")
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("the Etcd etcd-events has no spec.backup.store")))
}
