package etcd_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// The same chain on a real S3 server: the extension creates the bucket, the etcd-backup secret carries the
// S3 credentials and endpoint, and the Etcd's store points at that bucket with provider S3.
func TestDeployWithAnS3BackupEntryOnVersitygw(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	srv := s3server.Start(t)
	s := newShootWith(t, "s3", map[string][]byte{
		"accessKeyID":      []byte(srv.AccessKey),
		"secretAccessKey":  []byte(srv.SecretKey),
		"region":           []byte(srv.Region),
		"endpoint":         []byte(srv.Endpoint),
		"s3ForcePathStyle": []byte("true"),
	})
	g.Expect(etcd.New(env.Client, s.namespace, s.mainValues()).Deploy(ctx)).To(Succeed())

	store := getEtcd(g, s.namespace, "etcd-main").Spec.Backup.Store
	g.Expect(*store.Provider).To(Equal(druidv1alpha1.StorageProviderS3))
	g.Expect(*store.Container).To(Equal(s.bucket))
	g.Expect(store.Prefix).To(Equal(s.entry + "/etcd-main"))
	g.Expect(*store.SecretRef).To(Equal(*getEntry(g, s.entry).Status.EtcdBackupSecretRef))
	backupSecret := getSecret(g, s.namespace, store.SecretRef.Name)
	g.Expect(backupSecret.Data).To(HaveKeyWithValue("endpoint", []byte(srv.Endpoint)))
	g.Expect(backupSecret.Data).To(HaveKeyWithValue("bucketName", []byte(s.bucket)))
	_, err := srv.Client().HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(*store.Container)})
	g.Expect(err).NotTo(HaveOccurred(), "the Etcd's container is a bucket that exists")
}
