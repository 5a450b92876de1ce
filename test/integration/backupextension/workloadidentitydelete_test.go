package backupextension_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/minioserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/oidcissuer"
)

const (
	wiRegion   = "us-east-1"
	wiAudience = "etcd-backup"
)

// wiStore is a MinIO that exchanges tokens of a local OpenID issuer for its role (STS
// AssumeRoleWithWebIdentity), with a bucket of backups of two entries.
type wiStore struct {
	iss    *oidcissuer.Issuer
	minio  *minioserver.Server
	root   *awss3.Client
	bucket string
}

func startWorkloadIdentityStore(t *testing.T) *wiStore {
	t.Helper()
	// The exchange must go to the store's own STS, as in a pod where nothing names another.
	for _, v := range []string{"AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID",
		"AWS_SECRET_ACCESS_KEY", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"} {
		t.Setenv(v, "")
		NewWithT(t).Expect(os.Unsetenv(v)).To(Succeed())
	}
	iss := oidcissuer.Start(t)
	minio := minioserver.Start(t, minioserver.Config{Region: wiRegion, OpenID: &minioserver.OpenID{
		ConfigURL: iss.ConfigURL(), ClientID: wiAudience, RolePolicy: "readwrite"}})
	root := awss3.New(awss3.Options{BaseEndpoint: aws.String(minio.Endpoint), Region: wiRegion, UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: minioserver.RootUser, SecretAccessKey: minioserver.RootPassword}, nil
		})})
	store := &wiStore{iss: iss, minio: minio, root: root, bucket: "wi-" + rand.String(8)}
	_, err := root.CreateBucket(t.Context(), &awss3.CreateBucketInput{Bucket: aws.String(store.bucket)})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return store
}

// token is a token of the issuer for the store's role, valid for expiry from now (negative: expired).
func (s *wiStore) token(t *testing.T, expiry time.Duration) []byte {
	t.Helper()
	tok, err := s.iss.Token(s.iss.Key, "system:serviceaccount:garden:backup", wiAudience, expiry)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return []byte(tok)
}

// config is the workload-identity configuration of the store: the role, and where an S3-compatible store is.
func (s *wiStore) config() string {
	return "apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nroleARN: " + s.minio.RoleARN +
		"\nendpoint: " + s.minio.Endpoint + "\ns3ForcePathStyle: true\n"
}

func (s *wiStore) put(t *testing.T, key string) {
	t.Helper()
	_, err := s.root.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key), Body: strings.NewReader("snapshot")})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
}

func (s *wiStore) keys(g Gomega) []string {
	out, err := s.root.ListObjectsV2(context.Background(), &awss3.ListObjectsV2Input{Bucket: aws.String(s.bucket)})
	g.Expect(err).NotTo(HaveOccurred())
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// newStoreEntry creates an s3 BackupEntry of the store whose entry secret is a workload identity as gardenlet
// relays it: the configuration in `config`, the token requestor's labels and annotations, no token yet.
func newStoreEntry(t *testing.T, s *wiStore, namespace string) (*extensionsv1alpha1.BackupEntry, *corev1.Secret) {
	t.Helper()
	g := NewWithT(t)
	name := entryName(namespace)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "entry-" + name, Namespace: "garden",
			Labels:      map[string]string{wiPurposeLabel: wiPurpose, wiProviderLabel: "aws"},
			Annotations: map[string]string{wiName: "seed-backup", wiNamespace: "garden"},
		},
		Data: map[string][]byte{"config": []byte(s.config())},
	}
	g.Expect(env.Client.Create(context.Background(), secret)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), secret) })
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "s3"},
			Region:      wiRegion,
			BucketName:  s.bucket,
			SecretRef:   corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace},
		},
	}
	g.Expect(env.Client.Create(context.Background(), be)).To(Succeed())
	t.Cleanup(func() { forceRemove(t, be) })
	return be, secret
}

// writeToken does what gardenlet's token requestor does: it writes the token into the entry secret.
func writeToken(t *testing.T, secret *corev1.Secret, token []byte) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		current := &corev1.Secret{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(secret), current); err != nil {
			return err
		}
		current.Data["token"] = token
		return env.Client.Update(context.Background(), current)
	}, timeout, interval).Should(Succeed())
}

// waitForDeleteError waits until the entry's failed deletion reports text in lastError and in a warning event.
func waitForDeleteError(t *testing.T, be *extensionsv1alpha1.BackupEntry, text string) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		get(g, be)
		g.Expect(be.Status.LastOperation).NotTo(BeNil())
		g.Expect(be.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeDelete))
		g.Expect(be.Status.LastError).NotTo(BeNil())
		g.Expect(strings.ToLower(be.Status.LastError.Description)).To(ContainSubstring(text))
	}, timeout, interval).Should(Succeed())
	g.Eventually(notesOf(be.Name, corev1.EventTypeWarning, "DeleteFailed"), timeout, interval).
		Should(ContainElement(ContainSubstring("NOT deleted")))
}

// As Gardener's provider extensions: the backups of a workload-identity entry are deleted with the token
// gardenlet's token requestor writes into the entry secret, exchanged for the role of `config` at the
// store's STS (MinIO against a local OpenID issuer). Without a usable token — none yet, or an expired one —
// nothing is deleted and the entry is not released: the deletion fails with lastError and a warning
// event and is retried until a token works. Another entry's backups stay.
func TestWorkloadIdentityEntryBackupsAreDeletedWithTheEntrySecretsToken(t *testing.T) {
	g := NewWithT(t)
	store := startWorkloadIdentityStore(t)
	namespace := newShootNamespace(t)
	be, entrySecret := newStoreEntry(t, store, namespace)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	etcdBackup := getSecret(g, namespace, "etcd-backup")
	g.Expect(etcdBackup.Data).To(HaveKeyWithValue("roleARN", []byte(store.minio.RoleARN)))
	g.Expect(etcdBackup.Data).To(HaveKeyWithValue("endpoint", []byte(store.minio.Endpoint)), "the sidecar reaches the same store")
	g.Expect(etcdBackup.Data).To(HaveKeyWithValue("s3ForcePathStyle", []byte("true")))

	other := be.Name + "x"
	store.put(t, be.Name+"/etcd-main/v2/Full-00000000-00000001-1")
	store.put(t, be.Name+"/etcd-main/v2/Incr-00000001-00000002-2")
	store.put(t, other+"/etcd-main/v2/Full-00000000-00000001-1")

	g.Expect(env.Client.Delete(context.Background(), be)).To(Succeed())
	waitForDeleteError(t, be, "no token")
	g.Expect(store.keys(g)).To(HaveLen(3), "nothing is deleted without a token")
	g.Expect(getSecret(g, "garden", entrySecret.Name).Finalizers).To(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))

	writeToken(t, entrySecret, store.token(t, -time.Minute))
	waitForDeleteError(t, be, "expired")
	g.Expect(store.keys(g)).To(HaveLen(3), "nothing is deleted with an expired token")

	// The deletion is retried with back-off; a fresh token lets the next attempt through.
	writeToken(t, entrySecret, store.token(t, time.Hour))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(be), be)).NotTo(Succeed())
	}, 3*time.Minute, interval).Should(Succeed(), "the entry is released once its backups are deleted")
	g.Expect(store.keys(g)).To(Equal([]string{other + "/etcd-main/v2/Full-00000000-00000001-1"}))
	g.Expect(getSecret(g, "garden", entrySecret.Name).Finalizers).NotTo(ContainElement(extensionsv1alpha1.BackupEntryFinalizer))
	g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue())
}
