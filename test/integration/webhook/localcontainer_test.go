package webhook

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// A container kept from an S3 store ("../x" is a fine bucket name there) is judged again when the store
// becomes Local: the webhook's ratchet keeps unchanged fields updatable, but not across a provider change
// that gives the field another meaning.
func TestValidationWebhookJudgesTheContainerWhenTheStoreBecomesLocal(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	etcd := exampleEtcd(t)
	etcd.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderS3)
	etcd.Spec.Backup.Store.Container = ptr.To("../x")
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())

	etcd.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderLocal)
	err := env.Client.Update(ctx, etcd)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.backup.store.container"))

	etcd.Spec.Backup.Store.Container = ptr.To("x")
	g.Expect(env.Client.Update(ctx, etcd)).To(Succeed(), "one path segment is a Local container")
}
