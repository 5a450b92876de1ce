package webhook

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/hostile"
)

func exampleEtcd(t *testing.T) *druidv1alpha1.Etcd {
	t.Helper()
	etcd, err := hostile.ExampleEtcd(env.CreateNamespace(t))
	if err != nil {
		t.Fatal(err)
	}
	return etcd
}

// TestValidationWebhookRejectsWhatTheSchemaCannot checks rules that only the webhook enforces.
func TestValidationWebhookRejectsWhatTheSchemaCannot(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		mutate func(*druidv1alpha1.Etcd)
		field  string
	}{
		"invalid pod label": {func(e *druidv1alpha1.Etcd) { e.Spec.Labels["not a label"] = "x" }, "spec.labels"},
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

// TestValidationWebhookKeepsSecretRefsInTheEtcdsNamespace checks that no secret reference of an Etcd or a
// copy task points into another namespace, on CREATE and on an UPDATE that changes the reference.
func TestValidationWebhookKeepsSecretRefsInTheEtcdsNamespace(t *testing.T) {
	ctx := context.Background()
	for fld, point := range map[string]func(*druidv1alpha1.Etcd, string){
		"spec.backup.store.secretRef.namespace":               func(e *druidv1alpha1.Etcd, ns string) { e.Spec.Backup.Store.SecretRef.Namespace = ns },
		"spec.etcd.clientUrlTls.serverTLSSecretRef.namespace": func(e *druidv1alpha1.Etcd, ns string) { e.Spec.Etcd.ClientUrlTLS.ServerTLSSecretRef.Namespace = ns },
		"spec.etcd.clientUrlTls.tlsCASecretRef.namespace":     func(e *druidv1alpha1.Etcd, ns string) { e.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.Namespace = ns },
		"spec.etcd.peerUrlTls.clientTLSSecretRef.namespace":   func(e *druidv1alpha1.Etcd, ns string) { setPeerClientRef(e, ns) },
		"spec.etcd.authSecretRef.namespace": func(e *druidv1alpha1.Etcd, ns string) {
			e.Spec.Etcd.AuthSecretRef = &corev1.SecretReference{Name: "auth", Namespace: ns}
		},
		"spec.backup.tls.serverTLSSecretRef.namespace": func(e *druidv1alpha1.Etcd, ns string) { e.Spec.Backup.TLS.ServerTLSSecretRef.Namespace = ns },
	} {
		t.Run(fld, func(t *testing.T) {
			g := NewWithT(t)
			etcd := exampleEtcd(t)
			point(etcd, "kube-system")
			err := env.Client.Create(ctx, etcd)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(fld))

			point(etcd, etcd.Namespace)
			g.Expect(env.Client.Create(ctx, etcd)).To(Succeed(), "the own namespace is fine")
			point(etcd, "kube-system")
			err = env.Client.Update(ctx, etcd)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "changing the reference to another namespace, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(fld))
		})
	}

	t.Run("copy task stores", func(t *testing.T) {
		g := NewWithT(t)
		namespace := env.CreateNamespace(t)
		task := &druidv1alpha1.EtcdCopyBackupsTask{
			ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: namespace},
			Spec: druidv1alpha1.EtcdCopyBackupsTaskSpec{
				SourceStore: druidv1alpha1.StoreSpec{Prefix: "a/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3),
					SecretRef: &corev1.SecretReference{Name: "source", Namespace: "garden"}},
				TargetStore: druidv1alpha1.StoreSpec{Prefix: "b/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3),
					SecretRef: &corev1.SecretReference{Name: "target"}},
			},
		}
		err := env.Client.Create(ctx, task)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.sourceStore.secretRef.namespace"))
		task.Spec.SourceStore.SecretRef.Namespace = namespace
		g.Expect(env.Client.Create(ctx, task)).To(Succeed())
	})
}

func setPeerClientRef(e *druidv1alpha1.Etcd, namespace string) {
	e.Spec.Etcd.PeerUrlTLS.ClientTLSSecretRef = corev1.SecretReference{Name: "peer-client", Namespace: namespace}
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
	g.Expect(err.Error()).To(ContainSubstring("spec.targetStore must differ from spec.sourceStore"))

	task.Spec.TargetStore.Prefix = "shoot--a--c/etcd-main"
	g.Expect(env.Client.Create(context.Background(), task)).To(Succeed())
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(task), task)).To(Succeed())
}

// The webhook refuses what the EtcdOpsTask schema lets through: a task without an Etcd, and the upstream
// API's quorum-loss recovery, which this druid does not run; each message names the field.
func TestValidationWebhookRejectsOpsTasksDruidCannotRun(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	snapshot := druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: &druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull}}
	for name, tc := range map[string]struct {
		spec    druidv1alpha1.EtcdOpsTaskSpec
		message string
	}{
		"no etcd": {druidv1alpha1.EtcdOpsTaskSpec{Config: snapshot}, "spec.etcdName: Required value"},
	} {
		task := &druidv1alpha1.EtcdOpsTask{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: namespace}, Spec: tc.spec}
		err := env.Client.Create(ctx, task)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: want 422 Invalid, got %v", name, err)
		g.Expect(err.Error()).To(ContainSubstring(tc.message), name)
	}

	task := &druidv1alpha1.EtcdOpsTask{ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: namespace},
		Spec: druidv1alpha1.EtcdOpsTaskSpec{EtcdName: ptr.To("etcd-main"), Config: snapshot}}
	g.Expect(env.Client.Create(ctx, task)).To(Succeed())
	// Labels may change; the spec may not (the CRD's rules say so as well).
	task.Labels = map[string]string{"purpose": "test"}
	g.Expect(env.Client.Update(ctx, task)).To(Succeed())
	task.Spec.EtcdName = ptr.To("etcd-events")
	err := env.Client.Update(ctx, task)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("etcdName is immutable"))
}

// A final full snapshot task is refused, naming spec.config.onDemandSnapshot.isFinal, for an Etcd whose
// clients nothing declared stopped; it is admitted once the Etcd carries the declaration. A task for an
// Etcd that does not exist (yet) is left to the controller, which rejects it in its status.
func TestValidationWebhookRefusesFinalSnapshotTasksOfARunningEtcd(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	etcd := exampleEtcd(t)
	namespace := etcd.Namespace
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	final := func(name string) *druidv1alpha1.EtcdOpsTask {
		return &druidv1alpha1.EtcdOpsTask{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: druidv1alpha1.EtcdOpsTaskSpec{EtcdName: ptr.To(etcd.Name), Config: druidv1alpha1.EtcdOpsTaskConfig{
				OnDemandSnapshot: &druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull, IsFinal: ptr.To(true)}}}}
	}
	err := env.Client.Create(ctx, final("final"))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.config.onDemandSnapshot.isFinal: Forbidden"))
	g.Expect(err.Error()).To(ContainSubstring("druid.gardener.cloud/final-snapshot-allowed"))

	metav1.SetMetaDataAnnotation(&etcd.ObjectMeta, "druid.gardener.cloud/final-snapshot-allowed", "true")
	g.Expect(env.Client.Update(ctx, etcd)).To(Succeed())
	g.Expect(env.Client.Create(ctx, final("final"))).To(Succeed())

	missing := final("other")
	missing.Spec.EtcdName = ptr.To("no-such-etcd")
	g.Expect(env.Client.Create(ctx, missing)).To(Succeed())
}
