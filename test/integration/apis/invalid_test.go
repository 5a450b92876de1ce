package apis

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// invalidCase breaks one rule of a valid object. The apiserver must reject the object with an error that
// names field and says what is allowed (allowed).
type invalidCase struct {
	name    string
	field   string
	allowed string
	// etcd mutates a copy of the example Etcd; unstructured mutates its unstructured form instead, for
	// invalid shapes that the Go types cannot express (a missing required field).
	etcd         func(*druidv1alpha1.Etcd)
	unstructured func(map[string]any)
}

// The schema is upstream etcd-druid's CRD: even member counts and any provider string pass it; unknown providers are refused by druid's validation webhook
// (test/integration/webhook).
func TestInvalidEtcdsAreRejectedOnCreate(t *testing.T) {
	cases := []invalidCase{
		{name: "negative replicas", field: "spec.replicas", allowed: "non-negative", etcd: func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = -1 }},
		{name: "missing store prefix", field: "spec.backup.store.prefix", allowed: "Required", unstructured: func(o map[string]any) {
			unstructured.RemoveNestedField(o, "spec", "backup", "store", "prefix")
		}},
		{name: "deltaSnapshotPeriod equal to garbageCollectionPeriod", field: "spec.backup.deltaSnapshotPeriod", allowed: "garbageCollectionPeriod must be greater than", etcd: func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.DeltaSnapshotPeriod = &metav1.Duration{Duration: 12 * time.Hour}
		}},
		{name: "deltaSnapshotPeriod longer than garbageCollectionPeriod", field: "spec.backup.deltaSnapshotPeriod", allowed: "garbageCollectionPeriod must be greater than", etcd: func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.DeltaSnapshotPeriod = &metav1.Duration{Duration: 24 * time.Hour}
		}},
		{name: "unknown garbage collection policy", field: "spec.backup.garbageCollectionPolicy", allowed: `"LimitBased"`, etcd: func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicy("KeepAll"))
		}},
		{name: "unknown compression policy", field: "spec.backup.compression.policy", allowed: `"gzip"`, etcd: func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.SnapshotCompression.Policy = ptr.To(druidv1alpha1.CompressionPolicy("xz"))
		}},
		{name: "unknown metrics level", field: "spec.etcd.metrics", allowed: `"basic"`, etcd: func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Metrics = ptr.To(druidv1alpha1.MetricsLevel("all")) }},
		{name: "missing pod labels", field: "spec.labels", allowed: "Required", unstructured: func(o map[string]any) {
			unstructured.RemoveNestedField(o, "spec", "labels")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			etcd := exampleEtcd(t)
			var obj client.Object = etcd
			if tc.etcd != nil {
				tc.etcd(etcd)
				// The validation library that druid's webhook uses must agree with the CRD.
				g.Expect(fieldsOf(validation.ValidateEtcd(etcd))).To(ContainElement(tc.field), "the Go validation rejects it too")
			} else {
				obj = toUnstructured(t, etcd, tc.unstructured)
			}
			expectRejected(t, g, env.Client.Create(context.Background(), obj), tc)
		})
	}
}

func TestImmutableEtcdFieldsAreRejectedOnUpdate(t *testing.T) {
	cases := []invalidCase{
		{name: "storageClass changed", field: "spec.storageClass", allowed: "immutable", etcd: func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To("standard") }},
		{name: "storageClass removed", field: "spec.storageClass", allowed: "cannot be added or removed", etcd: func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = nil }},
		{name: "volumeClaimTemplate added", field: "spec.volumeClaimTemplate", allowed: "cannot be added or removed", etcd: func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("data") }},
		{name: "memberNamePrefix added", field: "spec.memberNamePrefix", allowed: "immutable", etcd: func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("garden") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			etcd := exampleEtcd(t)
			g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
			old := etcd.DeepCopy()
			tc.etcd(etcd)
			g.Expect(fieldsOf(validation.ValidateEtcdUpdate(etcd, old))).To(ContainElement(tc.field), "the Go validation rejects it too")
			expectRejected(t, g, env.Client.Update(ctx, etcd), tc)

			// A mutable change on the same object still goes through.
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())
			etcd.Spec.Replicas = 5
			g.Expect(env.Client.Update(ctx, etcd)).To(Succeed())
		})
	}
}

func TestImmutableBackupEntryRegion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	entry := readExample(t, "backupentry.yaml", &extensionsv1alpha1.BackupEntry{})
	entry.Name = "shoot--immutable--region"
	g.Expect(env.Client.Create(ctx, entry)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, entry) })
	entry.Spec.Region = "us-east-1"
	expectRejected(t, g, env.Client.Update(ctx, entry), invalidCase{field: "spec.region", allowed: "immutable"})
}

func expectRejected(t *testing.T, g Gomega, err error, tc invalidCase) {
	g.Expect(err).To(HaveOccurred(), "the apiserver must reject %s", tc.name)
	t.Logf("rejected: %v", err)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a validation error (422), got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(tc.field), "the message names the field")
	g.Expect(err.Error()).To(ContainSubstring(tc.allowed), "the message says what is allowed")
}

func exampleEtcd(t *testing.T) *druidv1alpha1.Etcd {
	etcd := readExample(t, "etcd.yaml", &druidv1alpha1.Etcd{})
	etcd.Namespace = env.CreateNamespace(t)
	return etcd
}

func toUnstructured(t *testing.T, obj runtime.Object, mutate func(map[string]any)) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	mutate(content)
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(druidv1alpha1.SchemeGroupVersion.WithKind("Etcd"))
	return u
}

// fieldsOf lists the fields a validation result names.
func fieldsOf(errs field.ErrorList) []string {
	fields := make([]string, 0, len(errs))
	for _, err := range errs {
		fields = append(fields, err.Field)
	}
	return fields
}
