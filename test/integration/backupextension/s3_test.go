package backupextension_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

func s3Credentials(srv *s3server.Server) map[string][]byte {
	return map[string][]byte{
		"accessKeyID":      []byte(srv.AccessKey),
		"secretAccessKey":  []byte(srv.SecretKey),
		"region":           []byte(srv.Region),
		"endpoint":         []byte(srv.Endpoint),
		"s3ForcePathStyle": []byte("true"),
	}
}

func objectKeys(g Gomega, srv *s3server.Server, bucket string) []string {
	out, err := srv.Client().ListObjectsV2(context.Background(), &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	g.Expect(err).NotTo(HaveOccurred())
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	sort.Strings(keys)
	return keys
}

func TestS3BucketEntrySecretAndPrefixDeletion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	srv := s3server.Start(t)

	bb := newBucket(t, "s3", s3Credentials(srv))
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	_, err := srv.Client().HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(bb.Name)})
	g.Expect(err).NotTo(HaveOccurred(), "the controller created the bucket")
	g.Expect(bb.Status.GeneratedSecretRef).To(Equal(&corev1.SecretReference{Name: "generated-bucket-" + bb.Name, Namespace: "garden"}))
	generated := getSecret(g, "garden", "generated-bucket-"+bb.Name)
	g.Expect(generated.Data).To(HaveKeyWithValue("endpoint", []byte(srv.Endpoint)))
	g.Expect(generated.Data).To(HaveKeyWithValue("accessKeyID", []byte(srv.AccessKey)))

	namespace := newShootNamespace(t)
	be := newEntry(t, bb, entryName(namespace), s3Credentials(srv))
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	g.Expect(be.Status.EtcdBackupSecretRef).To(Equal(&corev1.SecretReference{Name: "etcd-backup", Namespace: namespace}))
	secret := getSecret(g, namespace, "etcd-backup")
	want := s3Credentials(srv)
	want["bucketName"] = []byte(bb.Name)
	g.Expect(secret.Data).To(Equal(want))
	g.Expect(secret.Annotations).To(HaveKeyWithValue(backupentry.CreatedByAnnotation, be.Name))

	keep := be.Name + "x/etcd-main/v2/Full-00000000-00000001-1"
	for _, key := range []string{
		be.Name + "/etcd-main/v2/Full-00000000-00000001-1",
		be.Name + "/etcd-main/v2/Incr-00000002-00000003-2",
		be.Name + "/etcd-events/v2/Full-00000000-00000001-1",
		keep,
	} {
		_, err := srv.Client().PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(bb.Name), Key: aws.String(key), Body: strings.NewReader("snapshot")})
		g.Expect(err).NotTo(HaveOccurred())
	}

	deleteAndWaitGone(t, be)
	g.Expect(objectKeys(g, srv, bb.Name)).To(Equal([]string{keep}))
	g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue())

	deleteAndWaitGone(t, bb)
	_, err = srv.Client().HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(bb.Name)})
	g.Expect(err).To(HaveOccurred(), "the bucket was deleted with its remaining objects")
	g.Expect(secretGone("garden", "generated-bucket-"+bb.Name)()).To(BeTrue())
}

func TestS3BucketWithWrongCredentialsReportsLastError(t *testing.T) {
	g := NewWithT(t)
	srv := s3server.Start(t)
	credentials := s3Credentials(srv)
	credentials["secretAccessKey"] = []byte("wrong")
	bb := newBucket(t, "s3", credentials)
	t.Cleanup(func() { forceRemove(t, bb) })

	g.Eventually(func(g Gomega) {
		get(g, bb)
		g.Expect(bb.Status.LastOperation).NotTo(BeNil())
		g.Expect(bb.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateError))
		g.Expect(bb.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeCreate))
		g.Expect(bb.Status.LastError).NotTo(BeNil())
		g.Expect(bb.Status.LastError.Description).To(ContainSubstring(bb.Name))
	}, timeout, interval).Should(Succeed())
	g.Expect(bb.Status.GeneratedSecretRef).To(BeNil())
}
