package webhook

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/envtest"
)

func exampleEtcd(t *testing.T) *druidv1alpha1.Etcd {
	t.Helper()
	root, err := envtest.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "example", "etcd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	etcd := &druidv1alpha1.Etcd{}
	if err := yaml.UnmarshalStrict(data, etcd); err != nil {
		t.Fatal(err)
	}
	etcd.Namespace = env.CreateNamespace(t)
	return etcd
}

// TestValidationWebhookRejectsWhatTheSchemaCannot checks rules that only the webhook enforces.
func TestValidationWebhookRejectsWhatTheSchemaCannot(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		mutate func(*druidv1alpha1.Etcd)
		field  string
	}{
		"full snapshot schedule that is no cron": {func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("daily at 3") }, "spec.backup.fullSnapshotSchedule"},
		"defragmentation schedule out of range":  {func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("0 25 * * *") }, "spec.etcd.defragmentationSchedule"},
		"invalid pod label":                      {func(e *druidv1alpha1.Etcd) { e.Spec.Labels["not a label"] = "x" }, "spec.labels"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			etcd := exampleEtcd(t)
			tc.mutate(etcd)
			err := env.Client.Create(ctx, etcd)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.field))
			g.Expect(err.Error()).To(ContainSubstring("admission webhook"), "rejected by the webhook, not the schema")
		})
	}

	t.Run("valid example is admitted and can be updated", func(t *testing.T) {
		g := NewWithT(t)
		etcd := exampleEtcd(t)
		g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
		etcd.Spec.Backup.FullSnapshotSchedule = ptr.To("0 4 * * *")
		g.Expect(env.Client.Update(ctx, etcd)).To(Succeed())
		etcd.Spec.Backup.FullSnapshotSchedule = ptr.To("at four")
		g.Expect(apierrors.IsInvalid(env.Client.Update(ctx, etcd))).To(BeTrue())
	})
}

func TestValidationWebhookRejectsACopyTaskOntoItsSource(t *testing.T) {
	g := NewWithT(t)
	store := druidv1alpha1.StoreSpec{Container: ptr.To("backups"), Prefix: "shoot--a--b/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3)}
	task := &druidv1alpha1.EtcdCopyBackupsTask{
		ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: env.CreateNamespace(t)},
		Spec:       druidv1alpha1.EtcdCopyBackupsTaskSpec{SourceStore: store, TargetStore: store},
	}
	err := env.Client.Create(context.Background(), task)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.targetStore.prefix"))

	task.Spec.TargetStore.Prefix = "shoot--a--c/etcd-main"
	g.Expect(env.Client.Create(context.Background(), task)).To(Succeed())
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(task), task)).To(Succeed())
}
