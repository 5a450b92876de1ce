package snapstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"
	"golang.org/x/sync/errgroup"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// Swift's limits: a manifest lists at most max_manifest_segments segments (1000 by default) and no
// object, segment or not, may exceed 5 GiB.
const (
	swiftMaxSegments    = 1000
	swiftMaxSegmentSize = 5 << 30
	// swiftSegmentsPerDoubling: the segment size doubles every so many segments, so that the 1000
	// segments of the default 5 MiB chunk hold 250 × 5 MiB × (1 + 2 + 4 + 8) ≈ 18 GiB, twice etcd's
	// largest database, while a snapshot of up to 1.2 GiB needs no more memory than one chunk per
	// parallel upload.
	swiftSegmentsPerDoubling = 250
)

// swiftSegmentSize is the size of segment n (from 0) for the configured chunk size.
func swiftSegmentSize(chunk, n int) int {
	return int(min(int64(chunk)<<(n/swiftSegmentsPerDoubling), swiftMaxSegmentSize))
}

const octetStream = "application/octet-stream"

// Save implements SnapStore.
func (s *swiftStore) Save(ctx context.Context, snap *snapshot.Snapshot, r io.Reader) error {
	if snap.Layout() != snapshot.LayoutV2 {
		return fmt.Errorf("saving %s: %w", snap, ErrReadOnlyLayout)
	}
	key := snap.Key(s.prefix)
	start := time.Now()
	n, segments, err := s.put(ctx, r, func() (string, error) { return key, nil })
	if err != nil {
		return fmt.Errorf("uploading %s to Swift container %s: %w", key, s.container, err)
	}
	s.log.Info("Saved snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision, "bytes", n, "segments", segments,
		"upload", time.Since(start).Round(time.Millisecond))
	return nil
}

// SaveStaged implements StagedSaver. Swift needs no staging object: a snapshot of one chunk is in memory
// when its name is asked for, and a larger one is in segments that any key's manifest can list, so the
// object is written once, under its final key, with no server-side copy.
func (s *swiftStore) SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	start := time.Now()
	var snap *snapshot.Snapshot
	n, segments, err := s.put(ctx, r, func() (string, error) {
		var err error
		if snap, err = name(); err != nil {
			return "", fmt.Errorf("naming the upload: %w", err)
		}
		if snap.Layout() != snapshot.LayoutV2 {
			return "", fmt.Errorf("saving %s: %w", snap, ErrReadOnlyLayout)
		}
		return snap.Key(s.prefix), nil
	})
	if err != nil {
		return nil, fmt.Errorf("uploading a snapshot named after its contents to Swift container %s: %w", s.container, err)
	}
	s.log.Info("Saved snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision, "bytes", n, "segments", segments,
		"upload", time.Since(start).Round(time.Millisecond))
	return snap, nil
}

// SaveExpected implements StagedSaver.
func (s *swiftStore) SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	if expected.Layout() != snapshot.LayoutV2 {
		return nil, fmt.Errorf("saving %s: %w", expected, ErrReadOnlyLayout)
	}
	key := expected.Key(s.prefix)
	start := time.Now()
	var snap *snapshot.Snapshot
	n, segments, err := s.put(ctx, r, func() (string, error) {
		var err error
		if snap, err = name(); err != nil {
			return "", fmt.Errorf("naming the upload: %w", err)
		}
		if got := snap.Key(s.prefix); got != key {
			return "", fmt.Errorf("%w: expected %s, the bytes are %s", ErrUnexpectedName, expected.SnapName, snap.SnapName)
		}
		return key, nil
	})
	if err != nil {
		return nil, fmt.Errorf("uploading %s to Swift container %s: %w", key, s.container, err)
	}
	s.log.Info("Saved snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision, "bytes", n, "segments", segments,
		"upload", time.Since(start).Round(time.Millisecond))
	return snap, nil
}

// put streams r into the object whose key target returns once r is exhausted; an error of target aborts
// the upload. It returns the bytes and segments stored. Whatever fails, no object is left, and no segment
// but those of a manifest Swift may still write (see putWatched) and those of PUTs cut short (see
// segments).
func (s *swiftStore) put(ctx context.Context, r io.Reader, target func() (string, error)) (int64, int, error) {
	ctx, stall := watchStall(ctx, s.upload.StallTimeout)
	defer stall.stop()
	n, segments, err := s.putWatched(ctx, stall.source(r), target)
	return n, segments, stalledOr(ctx, err)
}

// putWatched is put under the stall watch of ctx.
func (s *swiftStore) putWatched(ctx context.Context, r io.Reader, target func() (string, error)) (int64, int, error) {
	first := make([]byte, s.upload.ChunkSize)
	n, err := io.ReadFull(r, first)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		key, err := target()
		if err != nil {
			return int64(n), 0, err
		}
		return int64(n), 0, s.replace(ctx, key, func(ctx context.Context) error {
			_, err := objects.Create(ctx, s.client, s.container, key, objects.CreateOpts{
				Content: bytes.NewReader(first[:n]), ContentType: octetStream, // gophercloud adds the MD5 as ETag, which Swift verifies
			}).Extract()
			return err
		})
	}
	if err != nil {
		return int64(n), 0, fmt.Errorf("reading the source after %d bytes: %w", n, err)
	}
	up := &swiftUpload{store: s, dir: path.Join(s.prefix, swiftSegmentsDir, uploadID())}
	total, err := up.segments(ctx, r, first)
	var key string
	var manifestSent bool
	if err == nil {
		if key, err = target(); err == nil {
			err = s.replace(ctx, key, func(ctx context.Context) error {
				manifestSent = true
				return up.putManifest(ctx, key)
			})
		}
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		if manifestSent && !refused(err) {
			if up.stored(cctx, key) {
				// The manifest went through although its answer did not arrive: the object is complete
				// and its segments must stay.
				s.log.Info("Manifest stored despite the error of its upload", "key", key, "error", err.Error())
				return total, len(up.parts), nil
			}
			// Swift may have the manifest and write it later, having checked the segments already:
			// deleting them now could leave a snapshot that lists and cannot be read.
			s.log.Info("Keeping the segments of an upload whose manifest Swift may still write", "key", key,
				"segments", up.dir+"/", "error", err.Error())
			return total, 0, fmt.Errorf("%w; its segments below %s/ are kept, as Swift may still write the manifest", err, up.dir)
		}
		if derr := s.deleteObjects(cctx, up.written()); derr != nil {
			err = errors.Join(err, fmt.Errorf("deleting the segments of the failed upload: %w", derr))
		}
		return total, 0, err
	}
	return total, len(up.parts), nil
}

// refused tells whether Swift answered a request with a client error (4xx), which it gives only for a
// request it did not carry out. A server error (5xx) is no such answer: a proxy server may report one
// for a write that some object servers hold and replication completes. A 401 whose new login failed
// comes as ErrUnableToReauthenticate, which does not unwrap to the 401.
func refused(err error) bool {
	var reauth *gophercloud.ErrUnableToReauthenticate
	if errors.As(err, &reauth) {
		return refused(reauth.ErrOriginal)
	}
	var code gophercloud.ErrUnexpectedResponseCode
	return errors.As(err, &code) && code.Actual >= 400 && code.Actual < 500
}

// replace writes the object at key with write and then deletes the segments of the object it replaced
// (a snapshot rewritten in place). Segments are named by upload, so the old ones are no one else's.
func (s *swiftStore) replace(ctx context.Context, key string, write func(context.Context) error) error {
	old, err := s.segmentsOf(ctx, key)
	if err != nil {
		return err
	}
	if err := write(ctx); err != nil {
		return s.wrap(err, "writing", key)
	}
	if len(old) > 0 {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		if err := s.deleteObjects(cctx, old); err != nil {
			s.log.Error(err, "Replaced a large object but could not delete all of its old segments", "key", key, "segments", len(old))
		}
	}
	return nil
}

// uploadID names the segments of one upload; two uploads, even of the same snapshot by two sidecars, never
// share one.
func uploadID() string {
	return time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + rand.Text()[:10]
}

// swiftUpload uploads the segments of one Static Large Object.
type swiftUpload struct {
	store *swiftStore
	dir   string

	mu    sync.Mutex
	names []string // every segment a PUT was started for, to delete them if the upload fails
	parts []swiftSegment
}

// swiftSegment is an entry of a manifest in the format of a manifest upload.
type swiftSegment struct {
	Path      string `json:"path"` // /<container>/<object>
	ETag      string `json:"etag"`
	SizeBytes int    `json:"size_bytes"`
	number    int
}

// segments uploads first and the rest of r as segments, MaxParallelChunks at a time. At most
// MaxParallelChunks + 1 buffers exist: one being filled from r, the others being uploaded.
//
// A segment PUT that has begun runs to its answer when the caller cancels or another segment fails (see
// outliving). Swift completes a PUT whose body it has received even after the client hung up, possibly
// after the clean-up's DELETE of that segment found nothing, and the segment would stay behind. A PUT cut
// short (a stall, the extra limit ended, a transport error after the body was sent) can still leave its
// segment; such segments never list as snapshots.
func (u *swiftUpload) segments(ctx context.Context, r io.Reader, first []byte) (int64, error) {
	opts := u.store.upload
	buffers := make(chan []byte, opts.MaxParallelChunks+1)
	for range opts.MaxParallelChunks {
		buffers <- nil
	}
	putCtx, stop := outliving(ctx, opts.StallTimeout)
	defer stop()
	// gctx ends the loop below on the caller's cancellation or a segment's failure; PUTs use putCtx.
	gctx, failed := context.WithCancelCause(ctx)
	defer failed(nil)
	var g errgroup.Group
	var total int64
	var sourceErr error
	data := first
	for n := 0; ; n++ {
		if n == swiftMaxSegments {
			sourceErr = fmt.Errorf("the snapshot needs more than %d segments (%d bytes so far), Swift's default limit of a manifest: raise the chunk size", swiftMaxSegments, total)
			break
		}
		total += int64(len(data))
		segment := data // data is refilled while the segment uploads
		g.Go(func() error {
			defer func() { buffers <- segment[:0] }()
			err := u.putSegment(putCtx, n, segment)
			if err != nil {
				failed(err)
			}
			return err
		})
		if len(data) < cap(data) { // the source ended inside this segment
			break
		}
		var buf []byte
		select {
		case buf = <-buffers:
		case <-gctx.Done():
		}
		if gctx.Err() != nil {
			sourceErr = context.Cause(gctx) // the caller's cancellation, or what a failed segment's error says
			break
		}
		if size := swiftSegmentSize(opts.ChunkSize, n+1); cap(buf) < size {
			buf = make([]byte, size)
		} else {
			buf = buf[:size]
		}
		read, err := io.ReadFull(r, buf)
		if gctx.Err() != nil { // cancelled or failed while the source was read: start no further segment
			sourceErr = context.Cause(gctx)
			break
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			sourceErr = fmt.Errorf("reading the source after %d bytes: %w", total+int64(read), err)
			break
		}
		data = buf[:read:read]
		if errors.Is(err, io.ErrUnexpectedEOF) {
			data = buf[:read] // shorter than its capacity: the last segment
		}
	}
	if err := g.Wait(); err != nil {
		return total, err
	}
	return total, sourceErr
}

func (u *swiftUpload) segmentName(n int) string {
	return path.Join(u.dir, fmt.Sprintf("%08d", n))
}

func (u *swiftUpload) putSegment(ctx context.Context, n int, data []byte) error {
	name := u.segmentName(n)
	u.mu.Lock()
	u.names = append(u.names, name)
	u.mu.Unlock()
	header, err := objects.Create(ctx, u.store.client, u.store.container, name, objects.CreateOpts{
		Content: bytes.NewReader(data), ContentType: octetStream,
	}).Extract()
	if err != nil {
		return fmt.Errorf("uploading segment %s: %w", name, err)
	}
	u.mu.Lock()
	u.parts = append(u.parts, swiftSegment{Path: "/" + u.store.container + "/" + name, ETag: header.ETag, SizeBytes: len(data), number: n})
	u.mu.Unlock()
	return nil
}

// putManifest makes the object appear at key. Swift checks each segment's size and ETag first. The PUT
// runs to its answer when the caller cancels (see outliving): without the answer, the clean-up could not
// know whether Swift will still write the manifest, after its check of the segments.
func (u *swiftUpload) putManifest(ctx context.Context, key string) error {
	ctx, stop := outliving(ctx, u.store.upload.StallTimeout)
	defer stop()
	u.mu.Lock()
	parts := slices.Clone(u.parts)
	u.mu.Unlock()
	sort.Slice(parts, func(i, j int) bool { return parts[i].number < parts[j].number })
	manifest, err := json.Marshal(parts)
	if err != nil {
		return err
	}
	_, err = objects.Create(ctx, u.store.client, u.store.container, key, objects.CreateOpts{
		Content: bytes.NewReader(manifest), ContentType: octetStream, MultipartManifest: "put", NoETag: true,
	}).Extract()
	return err
}

// stored tells whether the object at key is this upload's manifest.
func (u *swiftUpload) stored(ctx context.Context, key string) bool {
	segments, err := u.store.segmentsOf(ctx, key)
	return err == nil && slices.Contains(segments, u.segmentName(0))
}

// written are the segments that may exist on the server.
func (u *swiftUpload) written() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.names)
}
