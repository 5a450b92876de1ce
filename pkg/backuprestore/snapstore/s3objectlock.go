package snapstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/go-logr/logr"
)

// Immutable backups on S3 are buckets with S3 Object Lock and a default retention: every snapshot
// uploaded is kept, in all its bytes, until its retention ends, whatever deletes it. Two things differ
// from an ordinary bucket, and the store handles both once it has seen the bucket's lock configuration
// (s3ObjectLock, read when the store opens):
//   - AWS refuses an upload (PutObject, and each UploadPart) to such a bucket that carries neither
//     Content-MD5 nor a checksum; uploads then always carry a CRC32 checksum.
//   - Object Lock implies versioning, where a plain DeleteObject only adds a delete marker: it succeeds
//     even under retention and hides the snapshot from listings (and so from a restore) while its bytes
//     stay, and cost, for ever. The store deletes the object's version instead, which S3 refuses under
//     retention or legal hold; such a snapshot is reported as ErrLocked and stays (see deleteVersions).

// s3ObjectLock is what the store knows of a bucket's Object Lock configuration.
type s3ObjectLock struct {
	enabled bool
	// defaultRetention describes the bucket's default rule for logs ("GOVERNANCE 1d"); empty without one.
	defaultRetention string
}

// readObjectLock reads the bucket's Object Lock configuration. A bucket without one is not locked; an
// error (no permission s3:GetBucketObjectLockConfiguration, a server without Object Lock) is logged
// and taken as not locked, as the store behaved before it knew of Object Lock.
func readObjectLock(ctx context.Context, client *s3.Client, bucket string, log logr.Logger) s3ObjectLock {
	out, err := client.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil {
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ObjectLockConfigurationNotFoundError" {
			log.Info("Could not read the bucket's Object Lock configuration; treating it as a bucket without Object Lock", "error", err.Error())
		}
		return s3ObjectLock{}
	}
	cfg := out.ObjectLockConfiguration
	if cfg == nil || cfg.ObjectLockEnabled != types.ObjectLockEnabledEnabled {
		return s3ObjectLock{}
	}
	lock := s3ObjectLock{enabled: true}
	if cfg.Rule != nil && cfg.Rule.DefaultRetention != nil {
		r := cfg.Rule.DefaultRetention
		switch {
		case r.Days != nil:
			lock.defaultRetention = fmt.Sprintf("%s %dd", r.Mode, *r.Days)
		case r.Years != nil:
			lock.defaultRetention = fmt.Sprintf("%s %dy", r.Mode, *r.Years)
		}
	}
	return lock
}

// maxVersionsDeleted bounds the versions one delete removes: a snapshot's key is written once, or a few
// times when an upload was retried.
const maxVersionsDeleted = 16

// s3VersionDeleter deletes objects of a bucket with Object Lock version by version.
type s3VersionDeleter struct {
	client *s3.Client
	bucket string
	now    func() time.Time
}

// deleteVersions deletes key's current version, and the older versions that then become current, so that
// no bytes of the key are left. A version under retention or legal hold is not tried: the error wraps
// ErrLocked. A key that does not exist (or whose current version is a delete marker) is gone already.
func (d s3VersionDeleter) deleteVersions(ctx context.Context, key string) error {
	for range maxVersionsDeleted {
		head, err := d.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(key)})
		if err != nil {
			var notFound *types.NotFound
			if errors.As(err, &notFound) {
				return nil
			}
			return fmt.Errorf("reading the retention of %s: %w", key, err)
		}
		if err := d.locked(head); err != nil {
			return err
		}
		if _, err := d.client.DeleteObject(ctx, &s3.DeleteObjectInput{
			Bucket: aws.String(d.bucket), Key: aws.String(key), VersionId: head.VersionId}); err != nil {
			if wormRefusal(err) {
				return &LockedError{Lock: "the server refused the delete: " + err.Error()}
			}
			return fmt.Errorf("deleting version %s of %s: %w", aws.ToString(head.VersionId), key, err)
		}
		if head.VersionId == nil {
			return nil // not versioned after all: the object is gone
		}
	}
	return fmt.Errorf("%s still has versions after deleting %d of them", key, maxVersionsDeleted)
}

// locked reports a version S3 keeps: under a legal hold, or a retention that has not ended. Without the
// permission s3:GetObjectRetention (and s3:GetObjectLegalHold) S3 leaves these headers out; the delete
// is then tried and its refusal returned as an error.
func (d s3VersionDeleter) locked(head *s3.HeadObjectOutput) error {
	if head.ObjectLockLegalHoldStatus == types.ObjectLockLegalHoldStatusOn {
		return &LockedError{Lock: "legal hold"}
	}
	if until := head.ObjectLockRetainUntilDate; until != nil && until.After(d.now()) {
		return &LockedError{Until: *until, Lock: string(head.ObjectLockMode) + " retention"}
	}
	return nil
}

// wormRefusal tells a delete the server refused because the version is locked, in the words of MinIO
// (400 InvalidRequest "Object is WORM protected and cannot be overwritten"). AWS answers 403 AccessDenied,
// which a missing permission answers too: that stays an error, and the retention read before the delete
// (s3:GetObjectRetention) is what tells a lock there.
func wormRefusal(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidRequest" &&
		strings.Contains(strings.ToLower(apiErr.ErrorMessage()), "worm protected")
}
