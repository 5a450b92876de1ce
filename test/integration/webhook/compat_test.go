package webhook

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// "any object the upstream CRD accepts is accepted": Etcds in the shapes existing landscapes
// store for upstream etcd-druid, written as raw JSON so that a field our types did not know would be
// pruned by the CRD and show up as a difference on reading back.

// upstreamEtcd is an Etcd as upstream etcd-druid accepts it: an S3-compatible STACKIT store with an
// upper-case bucket, four members and the upstream fields this project's CRD used to prune.
const upstreamEtcd = `
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-main
spec:
  replicas: 4
  labels:
    app: etcd-statefulset
    role: main
  etcd:
    backendBboltFreelistType: array
    additionalAdvertisePeerURLs:
    - memberName: etcd-main-0
      urls:
      - http://10.0.0.1:2380
      - http://lb-0.example.com:2380
    bootstrapWithExistingCluster:
      members:
      - name: etcd-source-0
        peerUrls:
        - http://etcd-source-0.etcd-source-peer.source.svc:2380
      clientEndpoints:
      - http://etcd-source-client.source.svc:2379
  backup:
    store:
      provider: stackit
      container: Gardener-Backups-EU01
      prefix: shoot--dev--a--uid/etcd-main
`

// upstreamStatus are the status fields of upstream etcd-druid this project's CRD used to prune.
const upstreamStatus = `
selector: app.kubernetes.io/managed-by=etcd-druid,app.kubernetes.io/part-of=etcd-main
labelSelector:
  matchLabels:
    app.kubernetes.io/managed-by: etcd-druid
    app.kubernetes.io/part-of: etcd-main
bootstrapWithExistingCluster:
  joinedAt: "2026-06-04T10:11:00Z"
  members:
  - name: etcd-source-0
    peerUrls:
    - http://etcd-source-0.etcd-source-peer.source.svc:2380
`

// warningRecorder collects the warnings the apiserver returns (admission warnings among them).
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	taken := w.warnings
	w.warnings = nil
	return taken
}

func warningClient(t *testing.T) (client.Client, *warningRecorder) {
	t.Helper()
	recorder := &warningRecorder{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = recorder
	cfg.WarningHandlerWithContext = nil
	c, err := client.New(cfg, client.Options{Scheme: envtest.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, recorder
}

func unstructuredFromYAML(t *testing.T, data string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(data), &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// normalized compares JSON values regardless of how numbers were decoded.
func normalized(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func readBack(ctx context.Context, g Gomega, obj *unstructured.Unstructured) *unstructured.Unstructured {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
	return got
}

func TestUpstreamEtcdShapesAreAcceptedAndRoundTrip(t *testing.T) {
	ctx := context.Background()
	c, warnings := warningClient(t)

	t.Run("every upstream field round-trips, with warnings for the even member count and the bucket name", func(t *testing.T) {
		g := NewWithT(t)
		etcd := unstructuredFromYAML(t, upstreamEtcd)
		etcd.SetNamespace(env.CreateNamespace(t))
		written := normalized(t, etcd.Object["spec"])
		g.Expect(c.Create(ctx, etcd)).To(Succeed())
		got := warnings.take()
		g.Expect(got).To(ContainElement(ContainSubstring("spec.replicas: 4 members tolerate the failure of 1")), "warnings: %v", got)
		g.Expect(got).To(ContainElement(ContainSubstring("spec.backup.store.container")), "warnings: %v", got)
		g.Expect(got).NotTo(ContainElement(ContainSubstring("spec.backup.store.provider")), "stackit means S3 in both druids: %v", got)
		g.Expect(normalized(t, readBack(ctx, g, etcd).Object["spec"])).To(Equal(written))

		status := unstructuredFromYAML(t, upstreamStatus)
		stored := readBack(ctx, g, etcd)
		stored.Object["status"] = status.Object
		g.Expect(c.Status().Update(ctx, stored)).To(Succeed())
		g.Expect(normalized(t, readBack(ctx, g, etcd).Object["status"])).To(Equal(normalized(t, status.Object)))

		// Our typed API reads the upstream fields too.
		typed := &druidv1alpha1.Etcd{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), typed)).To(Succeed())
		g.Expect(typed.Spec.Etcd.BackendBboltFreelistType).To(HaveValue(Equal(druidv1alpha1.BboltFreelistArray)))
		g.Expect(typed.Spec.Etcd.AdditionalAdvertisePeerURLs).To(HaveLen(1))
		g.Expect(typed.Spec.Etcd.BootstrapWithExistingCluster.Members).To(HaveLen(1))
		g.Expect(typed.Status.LabelSelector.MatchLabels).To(HaveKeyWithValue("app.kubernetes.io/part-of", "etcd-main"))
		g.Expect(typed.Status.BootstrapWithExistingCluster.Members).To(HaveLen(1))
	})

	for provider, warned := range map[string]bool{
		"local": false, "stackit": false, "s3": true, "abs": true, "gcs": true, "swift": true, "oss": true, "ecs": true, "ocs": true,
	} {
		t.Run("provider "+provider, func(t *testing.T) {
			g := NewWithT(t)
			etcd := unstructuredFromYAML(t, upstreamEtcd)
			etcd.SetNamespace(env.CreateNamespace(t))
			g.Expect(unstructured.SetNestedField(etcd.Object, provider, "spec", "backup", "store", "provider")).To(Succeed())
			g.Expect(unstructured.SetNestedField(etcd.Object, "backups", "spec", "backup", "store", "container")).To(Succeed())
			g.Expect(unstructured.SetNestedField(etcd.Object, int64(2), "spec", "replicas")).To(Succeed())
			g.Expect(c.Create(ctx, etcd)).To(Succeed())
			got := warnings.take()
			g.Expect(got).To(ContainElement(ContainSubstring("spec.replicas: 2 members tolerate the failure of 0")), "warnings: %v", got)
			providerWarning := ContainElement(ContainSubstring("spec.backup.store.provider"))
			if warned {
				g.Expect(got).To(providerWarning, "warnings: %v", got)
			} else {
				g.Expect(got).NotTo(providerWarning, "warnings: %v", got)
			}
			stored, found, err := unstructured.NestedString(readBack(ctx, g, etcd).Object, "spec", "backup", "store", "provider")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(BeTrue())
			g.Expect(stored).To(Equal(provider), "stored as written; druid maps it when it renders the sidecar")
		})
	}
}

// bypassLabel marks objects the validation webhook does not see while bypassValidation is in effect.
const bypassLabel = "test.gardener-etcd/bypass-validation"

// bypassValidation makes the apiserver skip the Etcd validation webhook for objects labelled bypassLabel,
// the way an Etcd written before the webhook (or by upstream etcd-druid's webhook) got into the store;
// the webhook configuration is restored when the test ends.
func bypassValidation(ctx context.Context, t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	config := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: etcdvalidation.ConfigurationName}, config)).To(Succeed())
	original := config.DeepCopy()
	for i := range config.Webhooks {
		if strings.HasPrefix(config.Webhooks[i].Name, "validate.etcds.") {
			config.Webhooks[i].ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: bypassLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
			}}
		}
	}
	g.Expect(env.Client.Update(ctx, config)).To(Succeed())
	t.Cleanup(func() {
		restored := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: etcdvalidation.ConfigurationName}, restored); err != nil {
			t.Errorf("restoring the webhook configuration: %v", err)
			return
		}
		restored.Webhooks = original.Webhooks
		if err := env.Client.Update(ctx, restored); err != nil {
			t.Errorf("restoring the webhook configuration: %v", err)
		}
	})
}

// TestValidationRatchetsOnUpdate checks that an Etcd stored with a value create refuses still takes an
// unrelated update, while changing that field to another refused value is rejected naming the field.
func TestValidationRatchetsOnUpdate(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)

	// Create refuses an unknown provider (the CRD, like the upstream one, accepts any string).
	refused := exampleEtcd(t)
	refused.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("ftp"))
	err := env.Client.Create(ctx, refused)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.backup.store.provider"))
	g.Expect(err.Error()).To(ContainSubstring("admission webhook"))

	bypassValidation(ctx, t)
	etcd := exampleEtcd(t)
	etcd.Labels = map[string]string{bypassLabel: "true"}
	etcd.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("ftp"))
	g.Eventually(func() error { return env.Client.Create(ctx, etcd.DeepCopy()) }).
		WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())

	// The label goes, so the webhook sees every update from here on (old or new object matching suffices
	// for the apiserver to call it; the new one does). The update changes nothing the webhook refuses.
	delete(etcd.Labels, bypassLabel)
	etcd.Spec.Backup.FullSnapshotSchedule = ptr.To("0 5 * * *")
	etcd.Spec.Annotations["example.com/unrelated"] = "change"
	g.Expect(env.Client.Update(ctx, etcd)).To(Succeed(), "the stored provider did not change")
	g.Expect(etcd.Spec.Backup.Store.Provider).To(HaveValue(Equal(druidv1alpha1.StorageProvider("ftp"))))

	etcd.Spec.Replicas = 5
	g.Expect(env.Client.Update(ctx, etcd)).To(Succeed(), "a changed field is judged; 5 is fine")

	etcd.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("sftp"))
	err = env.Client.Update(ctx, etcd)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.backup.store.provider"))
	g.Expect(err.Error()).To(ContainSubstring("admission webhook"))

	// A changed field is judged as on create: a schedule that is no cron is still refused.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())
	etcd.Spec.Backup.FullSnapshotSchedule = ptr.To("at five")
	err = env.Client.Update(ctx, etcd)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.backup.fullSnapshotSchedule"))
	g.Expect(err.Error()).NotTo(ContainSubstring("spec.backup.store.provider"), "the unchanged provider is no reason")
}
