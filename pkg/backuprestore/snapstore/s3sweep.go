package snapstore

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr"
)

// s3MultipartSweeper aborts multipart uploads that no process will complete. An upload cut short by a
// crash (or a pod killed at the end of its termination grace) keeps its parts, which are billed as
// storage, until someone aborts it. Gardener's provider-aws extension sets an
// AbortIncompleteMultipartUpload lifecycle rule (7 days) on the buckets it creates; not every bucket has
// one, and not every S3-compatible store implements it.
type s3MultipartSweeper struct {
	client *s3.Client
	bucket string
	log    logr.Logger
}

// abort aborts the multipart uploads whose keys start with prefix and that were begun before olderThan,
// and returns how many it aborted. An empty prefix would reach other owners' uploads; it aborts none.
func (c s3MultipartSweeper) abort(ctx context.Context, prefix string, olderThan time.Time) (int, error) {
	if prefix == "" || prefix == "/" {
		return 0, nil
	}
	pages := s3.NewListMultipartUploadsPaginator(c.client, &s3.ListMultipartUploadsInput{Bucket: &c.bucket, Prefix: &prefix})
	aborted := 0
	var errs []error
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return aborted, errors.Join(append(errs, err)...)
		}
		for _, up := range page.Uploads {
			if up.Initiated == nil || !up.Initiated.Before(olderThan) {
				continue
			}
			_, err := c.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &c.bucket, Key: up.Key, UploadId: up.UploadId})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			aborted++
			c.log.Info("Aborted an abandoned multipart upload", "key", aws.ToString(up.Key), "initiated", *up.Initiated)
		}
	}
	return aborted, errors.Join(errs...)
}
