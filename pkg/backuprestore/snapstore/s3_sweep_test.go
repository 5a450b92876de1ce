package snapstore

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// A sweep aborts the multipart uploads below its prefix that were begun before its cutoff (a process that
// died mid-upload), and no other: not those begun since, nor another prefix's.
func TestS3SweepAbortsAbandonedMultipartUploads(t *testing.T) {
	srv := s3server.Start(t)
	srv.CreateBucket(t, "sweep")
	store := openS3ForTest(t, srv, "sweep", "shoot--a/etcd-main", UploadOptions{})
	begin := func(key string) {
		up, err := srv.Client().CreateMultipartUpload(t.Context(), &s3.CreateMultipartUploadInput{Bucket: aws.String("sweep"), Key: aws.String(key)})
		if err == nil {
			_, err = srv.Client().UploadPart(t.Context(), &s3.UploadPartInput{Bucket: aws.String("sweep"), Key: aws.String(key),
				UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("a part of an upload that died")})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	pending := func() []string {
		out, err := srv.Client().ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: aws.String("sweep")})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, up := range out.Uploads {
			keys = append(keys, aws.ToString(up.Key))
		}
		slices.Sort(keys)
		return keys
	}
	start := time.Now().Add(-time.Minute)
	begin("shoot--a/etcd-main/v2/Full-00000000-00000010-1700000000")
	begin("shoot--a/etcd-main/staging/1700000000000000000")
	begin("shoot--a/etcd-main-2/v2/Full-00000000-00000010-1700000000")
	sweeper := store.(UploadSweeper)

	if swept, err := sweeper.SweepAbandonedUploads(t.Context(), start); err != nil || swept.Deleted != 0 {
		t.Fatalf("sweep of uploads begun after its cutoff: %+v, %v", swept, err)
	}
	if got := pending(); len(got) != 3 {
		t.Fatalf("after a sweep with nothing old enough, the uploads pending are %v", got)
	}
	if swept, err := sweeper.SweepAbandonedUploads(t.Context(), time.Now().Add(time.Hour)); err != nil || swept.Deleted != 2 {
		t.Fatalf("sweep: %+v, %v; want the two uploads below the prefix aborted", swept, err)
	}
	if got, want := pending(), []string{"shoot--a/etcd-main-2/v2/Full-00000000-00000010-1700000000"}; !slices.Equal(got, want) {
		t.Fatalf("after the sweep the uploads pending are %v, want %v", got, want)
	}
}
