package s3_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/s3"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

func credentialsOf(srv *s3server.Server) map[string][]byte {
	return map[string][]byte{
		s3.DataKeyAccessKeyID:     []byte(srv.AccessKey),
		s3.DataKeySecretAccessKey: []byte(srv.SecretKey),
		s3.DataKeyEndpoint:        []byte(srv.Endpoint),
		s3.DataKeyForcePathStyle:  []byte("true"),
	}
}

func put(t *testing.T, srv *s3server.Server, bucket, key string) {
	t.Helper()
	if _, err := srv.Client().PutObject(context.Background(), &awss3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("data of " + key),
	}); err != nil {
		t.Fatal(err)
	}
}

func keys(t *testing.T, srv *s3server.Server, bucket string) []string {
	t.Helper()
	out, err := srv.Client().ListObjectsV2(context.Background(), &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range out.Contents {
		ks = append(ks, aws.ToString(o.Key))
	}
	sort.Strings(ks)
	return ks
}

func TestBucketLifecycleAndEntryDeletionOnARealS3Server(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	srv := s3server.Start(t)
	p := s3.New()
	bucket := provider.BucketRequest{Name: "seed-backups", Region: srv.Region, Credentials: credentialsOf(srv)}

	result, err := p.EnsureBucket(ctx, bucket)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.GeneratedSecretData).To(HaveKeyWithValue(s3.DataKeyEndpoint, []byte(srv.Endpoint)))
	g.Expect(result.GeneratedSecretData).To(HaveKeyWithValue(s3.DataKeyRegion, []byte(srv.Region)))
	_, err = p.EnsureBucket(ctx, bucket)
	g.Expect(err).NotTo(HaveOccurred(), "an existing bucket is fine")

	put(t, srv, "seed-backups", "shoot--a--b--uid/etcd-main/v2/Full-1")
	put(t, srv, "seed-backups", "shoot--a--b--uid/etcd-main/v2/Incr-2")
	put(t, srv, "seed-backups", "shoot--a--b--uid2/etcd-main/v2/Full-1")
	entry := provider.EntryRequest{Name: "shoot--a--b--uid", BucketName: "seed-backups", Region: srv.Region, Credentials: credentialsOf(srv)}
	g.Expect(p.DeleteEntry(ctx, entry)).To(Succeed())
	g.Expect(keys(t, srv, "seed-backups")).To(Equal([]string{"shoot--a--b--uid2/etcd-main/v2/Full-1"}), "a prefix sharing the entry's name stays")
	g.Expect(p.DeleteEntry(ctx, entry)).To(Succeed(), "deleting an empty entry is fine")

	g.Expect(p.DeleteBucket(ctx, bucket)).To(Succeed())
	_, err = srv.Client().HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String("seed-backups")})
	g.Expect(err).To(HaveOccurred())
	g.Expect(p.DeleteBucket(ctx, bucket)).To(Succeed(), "a missing bucket is fine")
	g.Expect(p.DeleteEntry(ctx, entry)).To(Succeed(), "an entry of a missing bucket is fine")
}

func TestEnsureBucketRejectsIncompleteCredentials(t *testing.T) {
	g := NewWithT(t)
	_, err := s3.New().EnsureBucket(context.Background(), provider.BucketRequest{
		Name: "b", Region: "eu-west-1", Credentials: map[string][]byte{s3.DataKeyAccessKeyID: []byte("id")},
	})
	g.Expect(err).To(MatchError(ContainSubstring("secretAccessKey")))
}

func TestEtcdSecretDataAddsRegionOnlyWhenMissing(t *testing.T) {
	g := NewWithT(t)
	p := s3.New()
	g.Expect(p.EtcdSecretData(provider.EntryRequest{Region: "eu-west-1"})).
		To(Equal(map[string][]byte{s3.DataKeyRegion: []byte("eu-west-1")}))
	g.Expect(p.EtcdSecretData(provider.EntryRequest{Region: "eu-west-1", Credentials: map[string][]byte{s3.DataKeyRegion: []byte("x")}})).
		To(BeEmpty())
}

// A workload-identity entry carries AWS's WorkloadIdentityConfig in `config`; the sidecar needs the role in
// `roleARN`, and a configuration that names none is refused naming the key.
func TestEtcdSecretDataTakesTheRoleOfAWorkloadIdentity(t *testing.T) {
	g := NewWithT(t)
	p := s3.New()
	config := func(s string) provider.EntryRequest {
		return provider.EntryRequest{Credentials: map[string][]byte{s3.DataKeyWorkloadIdentityConfig: []byte(s)}}
	}
	g.Expect(p.EtcdSecretData(config("apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nroleARN: arn:aws:iam::1:role/r\n"))).
		To(Equal(map[string][]byte{"roleARN": []byte("arn:aws:iam::1:role/r")}))
	_, err := p.EtcdSecretData(config("kind: WorkloadIdentityConfig\n"))
	g.Expect(err).To(MatchError(And(ContainSubstring(`"config"`), ContainSubstring("roleARN"))))
	_, err = p.EtcdSecretData(config("roleARN: ["))
	g.Expect(err).To(MatchError(ContainSubstring(`"config"`)))
}

// A workload identity of an S3-compatible store other than AWS says where the store is in its
// configuration (the entry secret carries nothing else); the sidecar gets the same endpoint and path style.
func TestEtcdSecretDataTakesTheStoreOfAWorkloadIdentity(t *testing.T) {
	g := NewWithT(t)
	req := provider.EntryRequest{Credentials: map[string][]byte{s3.DataKeyWorkloadIdentityConfig: []byte(
		"roleARN: arn:minio:iam:::role/r\nendpoint: http://10.0.0.1:9000\ns3ForcePathStyle: true\n")}}
	g.Expect(s3.New().EtcdSecretData(req)).To(Equal(map[string][]byte{
		"roleARN": []byte("arn:minio:iam:::role/r"), "endpoint": []byte("http://10.0.0.1:9000"), "s3ForcePathStyle": []byte("true"),
	}))
}

// Deleting a workload identity's backups needs the token gardenlet's token requestor writes into the entry
// secret: without one nothing is asked of the store, and the error says what is missing.
func TestDeleteEntryWithAWorkloadIdentityNeedsItsToken(t *testing.T) {
	err := s3.New().DeleteEntry(context.Background(), provider.EntryRequest{
		Name: "shoot--a--b--uid", BucketName: "b", Region: "eu-west-1",
		Credentials: map[string][]byte{s3.DataKeyWorkloadIdentityConfig: []byte("roleARN: arn:aws:iam::1:role/r\n")},
	})
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("no token")))
}
