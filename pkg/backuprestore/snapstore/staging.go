package snapstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"time"

	"gocloud.dev/blob"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// stagingDir holds uploads whose final name is not known yet. It is outside v1/ and v2/, so a listing
// never mistakes a staged (or abandoned) upload for a snapshot.
const stagingDir = "staging"

// stagedName names a staged upload after the beginning of its save, in Unix nanoseconds; a sweep reads
// it back (stagedBegan) to tell how old the save is.
func stagedName(began time.Time) string {
	return strconv.FormatInt(began.UnixNano(), 10)
}

// stagedBegan reads the beginning of a save from its staged upload's name: decimal digits only.
func stagedBegan(name string) (time.Time, bool) {
	for _, c := range name {
		if c < '0' || c > '9' {
			return time.Time{}, false
		}
	}
	nanos, err := strconv.ParseInt(name, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, nanos), true
}

// StagedSaver is implemented by every store of this package. It exists for full snapshots, whose name
// carries the database revision that is only known once the whole stream has been read (see package
// boltstream): streaming to a staging object and copying it server-side keeps the sidecar free of a
// second copy of the snapshot on disk or in memory.
type StagedSaver interface {
	// SaveStaged uploads r to a staging object; once r is exhausted and the upload is complete it calls
	// name to learn the snapshot, copies the staging object to the snapshot's key inside the store and
	// removes the staging object. On any failure no snapshot object is left behind.
	SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error)
	// SaveExpected uploads r straight to expected's key, for a caller that knows the name in advance but
	// wants it confirmed by the bytes: once r is exhausted it calls name and completes the upload only if
	// name returns expected's key. Otherwise the upload is aborted, no object is left behind and the error
	// wraps ErrUnexpectedName. It saves SaveStaged's server-side copy, which on S3 costs as much
	// server time as a fifth of the upload.
	SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error)
}

// ErrUnexpectedName is returned by SaveExpected when the bytes name a different snapshot than expected.
var ErrUnexpectedName = errors.New("the uploaded bytes are not the expected snapshot")

// SaveStaged implements StagedSaver.
func (s *blobStore) SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	start := time.Now()
	staging := path.Join(s.prefix, stagingDir, stagedName(start))
	n, err := s.stream(ctx, staging, r, nil)
	if err != nil {
		return nil, err
	}
	uploaded := time.Now()
	// The staging object goes whatever happens next; a context of its own so that a cancelled snapshot
	// still cleans up, and a store that has stopped answering does not hold the save.
	defer func() {
		switch err := s.cleanUp(ctx, staging); {
		case errors.Is(err, ErrLocked):
			// A bucket with Object Lock keeps the staging object until its retention ends; it is
			// outside v1/ and v2/, so no listing takes it for a snapshot.
			s.log.Info("Staging object stays until its retention ends", "key", staging, "reason", err.Error())
		case err != nil:
			s.log.Error(err, "Could not delete staging object", "key", staging)
		}
	}()
	snap, err := name()
	if err != nil {
		return nil, fmt.Errorf("naming staged upload %s: %w", staging, err)
	}
	if snap.Layout() != snapshot.LayoutV2 {
		return nil, fmt.Errorf("saving %s: %w", snap, ErrReadOnlyLayout)
	}
	key := snap.Key(s.prefix)
	copyObject := func(ctx context.Context, dst, src string, _ int64) error { return s.bucket.Copy(ctx, dst, src, nil) }
	if s.copyObject != nil {
		copyObject = s.copyObject
	}
	limit := s.upload.copyTimeout(n)
	cctx, cancel := context.WithTimeoutCause(ctx, limit, fmt.Errorf("%w: the server-side copy of %d bytes took over %s", ErrUploadStalled, n, limit))
	defer cancel()
	if err := copyObject(cctx, key, staging, n); err != nil {
		return nil, errors.Join(s.wrap(stalledOr(cctx, err), "copying staged upload to", key), s.cleanUp(ctx, key))
	}
	s.log.Info("Saved snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision, "bytes", n,
		"upload", uploaded.Sub(start).Round(time.Millisecond), "copy", time.Since(uploaded).Round(time.Millisecond))
	return snap, nil
}

// cleanUp deletes what a failed or finished save leaves at key, whether or not ctx is still live, for at
// most abortTimeout, or the stall limit where that is shorter: a store that does not answer a deletion
// for that long has stalled too.
func (s *blobStore) cleanUp(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(abortTimeout, s.upload.StallTimeout))
	defer cancel()
	return s.delete(ctx, key)
}

// SaveExpected implements StagedSaver.
func (s *blobStore) SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	if expected.Layout() != snapshot.LayoutV2 {
		return nil, fmt.Errorf("saving %s: %w", expected, ErrReadOnlyLayout)
	}
	key := expected.Key(s.prefix)
	start := time.Now()
	var snap *snapshot.Snapshot
	n, err := s.stream(ctx, key, r, func() error {
		var err error
		if snap, err = name(); err != nil {
			return fmt.Errorf("naming the upload to %s: %w", key, err)
		}
		if got := snap.Key(s.prefix); got != key {
			return fmt.Errorf("%w: expected %s, the bytes are %s", ErrUnexpectedName, expected.SnapName, snap.SnapName)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("Saved snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision, "bytes", n,
		"upload", time.Since(start).Round(time.Millisecond))
	return snap, nil
}

// stream uploads r to key and returns the bytes uploaded; a failing r or upload leaves no object. If
// beforeComplete is set, it runs once r is exhausted and before the upload completes (the object becomes
// visible); its error aborts the upload.
//
// The driver reads r itself (Bucket.Upload) instead of being written to: a failure of the source then
// reaches the driver as a read error, after the upload's context is cancelled, so that no driver can
// complete the object with the bytes read so far. A driver that fails the upload on the read error by
// itself (readErrorFailsUpload: S3's transfer manager) keeps its context instead: cancelling it
// abandons the parts in flight, which the server may still store after the driver has aborted the
// multipart upload, leaving their bytes (and on versitygw the upload) behind; only a store that has
// stalled (see watchStall) gets the upload's context cancelled all the same. Writing through a
// blob.Writer instead crashes the azureblob driver when its upload fails (its Close dereferences the pipe its upload goroutine has
// cleared; gocloud.dev v0.47.0).
func (s *blobStore) stream(ctx context.Context, key string, r io.Reader, beforeComplete func() error) (int64, error) {
	wctx, stall := watchStall(ctx, s.upload.StallTimeout)
	defer stall.stop()
	wctx, cancel := context.WithCancel(wctx)
	defer cancel()
	abort := cancel
	if s.readErrorFailsUpload {
		abort = func() {}
	}
	src := &uploadSource{r: stall.source(r), beforeComplete: beforeComplete, abort: abort}
	err := s.bucket.Upload(wctx, key, src, &blob.WriterOptions{
		ContentType:                 "application/octet-stream",
		DisableContentTypeDetection: true,
		BufferSize:                  s.upload.ChunkSize,
		MaxConcurrency:              s.upload.MaxParallelChunks,
		BeforeWrite:                 s.beforeWrite,
	})
	switch {
	case src.sourceErr != nil:
		return src.n, s.wrap(src.sourceErr, fmt.Sprintf("uploading (after %d bytes)", src.n), key)
	case src.completeErr != nil:
		return src.n, src.completeErr
	case err != nil:
		return src.n, s.wrap(stalledOr(wctx, err), fmt.Sprintf("uploading (%d bytes)", src.n), key)
	}
	return src.n, nil
}

// uploadSource is the reader a driver uploads from. It counts the bytes, runs beforeComplete when the
// source is exhausted, and on a failure of either calls abort (cancels the upload, unless the driver
// fails it on the error by itself) before handing the error to the driver, so that the failure is
// never taken for the end of the data.
type uploadSource struct {
	r              io.Reader
	beforeComplete func() error
	abort          context.CancelFunc

	n           int64
	sourceErr   error // the source failed
	completeErr error // beforeComplete failed
}

func (u *uploadSource) Read(p []byte) (int, error) {
	if err := cmp.Or(u.sourceErr, u.completeErr); err != nil {
		return 0, err
	}
	n, err := u.r.Read(p)
	u.n += int64(n)
	switch {
	case errors.Is(err, io.EOF):
		if u.beforeComplete != nil {
			check := u.beforeComplete
			u.beforeComplete = nil
			if u.completeErr = check(); u.completeErr != nil {
				u.abort()
				return n, u.completeErr
			}
		}
	case err != nil:
		u.sourceErr = err
		u.abort()
	}
	return n, err
}
