package backupextension_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
)

// Gardener's workload-identity wire names (security.gardener.cloud).
const (
	wiPurposeLabel    = "security.gardener.cloud/purpose"
	wiPurpose         = "workload-identity-token-requestor"
	wiProviderLabel   = "workloadidentity.security.gardener.cloud/provider"
	wiName            = "workloadidentity.security.gardener.cloud/name"
	wiNamespace       = "workloadidentity.security.gardener.cloud/namespace"
	wiContextObject   = "workloadidentity.security.gardener.cloud/context-object"
	wiRenewTimestamp  = "workloadidentity.security.gardener.cloud/token-renew-timestamp"
	awsWorkloadConfig = "apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nroleARN: arn:aws:iam::123456789012:role/etcd-backup\n"
)

// newWorkloadIdentityEntry creates an s3 BackupEntry whose entry secret has the shape gardenlet gives it
// when the seed's backup credentials are a WorkloadIdentity: the provider config in `config`, the purpose
// and provider labels and the WorkloadIdentity's annotations. stale is further data that must not reach
// the etcd backup secret.
func newWorkloadIdentityEntry(t *testing.T, namespace string, annotations map[string]string, stale map[string][]byte) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	name := entryName(namespace)
	data := map[string][]byte{"config": []byte(awsWorkloadConfig)}
	for k, v := range stale {
		data[k] = v
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "entry-" + name, Namespace: "garden",
			Labels:      map[string]string{wiPurposeLabel: wiPurpose, wiProviderLabel: "aws"},
			Annotations: annotations,
		},
		Data: data,
	}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), secret) })
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "s3"},
			Region:      "eu-west-1",
			BucketName:  "bb-wi-" + rand.String(6),
			SecretRef:   corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace},
		},
	}
	g.Expect(env.Client.Create(ctx, be)).To(Succeed())
	// The entry points at no store its deletion could reach; this test is about the secret.
	t.Cleanup(func() { forceRemove(t, be) })
	return be
}

func workloadIdentityAnnotations() map[string]string {
	return map[string]string{wiName: "seed-backup", wiNamespace: "garden", wiContextObject: `{"kind":"BackupEntry"}`, "unrelated": "x"}
}

// An entry with workload-identity credentials gets an etcd-backup secret the way Gardener's generic
// BackupEntry actuator writes it: `config` and the provider's keys (for S3 the role to assume), no static
// keys, the WorkloadIdentity's annotations and labels so that gardenlet's token requestor fills in `token`,
// and a token already there kept across reconciles.
func TestWorkloadIdentityEntryWritesTheTokenRequestorShape(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := newShootNamespace(t)
	be := newWorkloadIdentityEntry(t, namespace, workloadIdentityAnnotations(), map[string][]byte{"accessKeyID": []byte("stale"), "token": []byte("stale")})
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })

	secret := getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Data).To(Equal(map[string][]byte{
		"config":     []byte(awsWorkloadConfig),
		"bucketName": []byte(be.Spec.BucketName),
		"region":     []byte("eu-west-1"),
		"roleARN":    []byte("arn:aws:iam::123456789012:role/etcd-backup"),
	}))
	g.Expect(secret.Labels).To(Equal(map[string]string{wiPurposeLabel: wiPurpose, wiProviderLabel: "aws"}))
	g.Expect(secret.Annotations).To(Equal(map[string]string{
		wiName: "seed-backup", wiNamespace: "garden", wiContextObject: `{"kind":"BackupEntry"}`,
		backupentry.CreatedByAnnotation: be.Name,
	}))

	// gardenlet's token requestor writes the token and when to renew it.
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Data["token"] = []byte("jwt")
	secret.Annotations[wiRenewTimestamp] = "2030-01-01T00:00:00Z"
	secret.Annotations["someone-else"] = "y"
	g.Expect(env.Client.Patch(ctx, secret, patch)).To(Succeed())

	annotate(t, be, extensionsv1alpha1.OperationReconcile)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	secret = getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Data).To(HaveKeyWithValue("token", []byte("jwt")))
	g.Expect(secret.Data).To(HaveKeyWithValue("roleARN", []byte("arn:aws:iam::123456789012:role/etcd-backup")))
	g.Expect(secret.Annotations).To(HaveKeyWithValue(wiRenewTimestamp, "2030-01-01T00:00:00Z"))
	g.Expect(secret.Annotations).NotTo(HaveKey("someone-else"))

	// Back to static credentials: the token requestor must stop writing into the secret.
	entrySecret := getSecret(g, be.Spec.SecretRef.Namespace, be.Spec.SecretRef.Name)
	entrySecret.Labels, entrySecret.Annotations = nil, nil
	entrySecret.Data = map[string][]byte{"accessKeyID": []byte("a"), "secretAccessKey": []byte("s")}
	g.Expect(env.Client.Update(ctx, entrySecret)).To(Succeed())
	annotate(t, be, extensionsv1alpha1.OperationReconcile)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	secret = getSecret(g, namespace, "etcd-backup")
	g.Expect(secret.Labels).To(BeEmpty())
	g.Expect(secret.Annotations).To(Equal(map[string]string{backupentry.CreatedByAnnotation: be.Name}))
	g.Expect(secret.Data).To(Equal(map[string][]byte{
		"accessKeyID": []byte("a"), "secretAccessKey": []byte("s"),
		"bucketName": []byte(be.Spec.BucketName), "region": []byte("eu-west-1"),
	}))
}

// A workload-identity entry secret without the WorkloadIdentity's name or namespace cannot be handed to the
// token requestor: the entry fails naming the missing annotation and writes nothing.
func TestWorkloadIdentityEntryWithoutItsIdentityFails(t *testing.T) {
	g := NewWithT(t)
	namespace := newShootNamespace(t)
	annotations := workloadIdentityAnnotations()
	delete(annotations, wiNamespace)
	be := newWorkloadIdentityEntry(t, namespace, annotations, nil)
	waitForError(t, be, wiNamespace)
	g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue())
}

// A malformed workload-identity entry secret fails the entry whether or not its shoot namespace exists: a
// missing namespace must not let the entry report Succeeded with a secret that could never get a token.
func TestWorkloadIdentityEntryWithoutItsIdentityFailsWithoutItsNamespace(t *testing.T) {
	g := NewWithT(t)
	namespace := "shoot--dev--" + rand.String(8)
	annotations := workloadIdentityAnnotations()
	delete(annotations, wiName)
	be := newWorkloadIdentityEntry(t, namespace, annotations, nil)
	waitForError(t, be, wiName)
	g.Expect(be.Status.EtcdBackupSecretRef).To(BeNil())
}
