package s3

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// deletePrefix deletes every object whose key starts with prefix, a page (at most 1000 keys, the limit of
// one DeleteObjects call) at a time. A missing bucket counts as empty.
func deletePrefix(ctx context.Context, c *awss3.Client, bucket, prefix string) error {
	pages := awss3.NewListObjectsV2Paginator(c, &awss3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			if isNotFound(err) {
				return nil
			}
			return fmt.Errorf("listing %q in bucket %q: %w", prefix, bucket, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, 0, len(page.Contents))
		for _, obj := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: obj.Key})
		}
		out, err := c.DeleteObjects(ctx, &awss3.DeleteObjectsInput{
			Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("deleting objects under %q in bucket %q: %w", prefix, bucket, err)
		}
		if len(out.Errors) > 0 {
			first := out.Errors[0]
			return fmt.Errorf("deleting %d objects under %q in bucket %q failed, first %s: %s",
				len(out.Errors), prefix, bucket, aws.ToString(first.Key), aws.ToString(first.Message))
		}
	}
	return nil
}
