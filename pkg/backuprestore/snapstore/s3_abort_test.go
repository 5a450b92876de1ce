package snapstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// slowPartServer is a reverse proxy in front of the S3 server that plays a server slow to store parts.
// It streams each UploadPart to the server but holds back its last byte for partHold. When the client
// gives up on a part meanwhile, the proxy delivers the part all the same, as a server that has already
// started storing it would, and in the worst order the race can take: an AbortMultipartUpload of the
// upload reaches the server only once every part of it the server has begun is all there but for its
// last byte, and those parts are finished only after the abort has been answered.
type slowPartServer struct {
	proxy     *httputil.ReverseProxy
	partHold  time.Duration
	abortWait time.Duration // bounds every wait for another request

	mu      sync.Mutex
	uploads map[string]*heldUpload
	pending sync.WaitGroup // requests the proxy has not finished with
	dropped int            // parts the client gave up on before the server answered
}

// heldUpload tracks the requests of one multipart upload.
type heldUpload struct {
	started sync.WaitGroup // parts the server has begun but has not yet got all but their last byte of
	aborted chan struct{}  // closed once the server has answered an abort
}

func startSlowPartServer(t *testing.T, srv *s3server.Server, partHold time.Duration) (*slowPartServer, string) {
	t.Helper()
	s := &slowPartServer{
		proxy:     srv.ReverseProxy(),
		partHold:  partHold,
		abortWait: 10 * time.Second,
		uploads:   map[string]*heldUpload{},
	}
	front := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(front.Close)
	return s, front.URL
}

func (s *slowPartServer) upload(id string) *heldUpload {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.uploads[id]
	if !ok {
		u = &heldUpload{aborted: make(chan struct{})}
		s.uploads[id] = u
	}
	return u
}

func (s *slowPartServer) serve(w http.ResponseWriter, r *http.Request) {
	s.pending.Add(1)
	defer s.pending.Done()
	query := r.URL.Query()
	id := query.Get("uploadId")
	switch {
	case r.Method == http.MethodDelete && id != "":
		u := s.upload(id)
		waitFor(u.started.Wait, s.abortWait)
		s.proxy.ServeHTTP(w, r)
		close(u.aborted)
	case r.Method == http.MethodPut && query.Has("partNumber") && r.ContentLength > 0:
		s.servePart(w, r, s.upload(id))
	default:
		s.proxy.ServeHTTP(w, r)
	}
}

// servePart reads the part from the client as fast as it comes and streams it to the server meanwhile,
// all but its last byte at once and the last one once the part is released (see slowPartServer).
func (s *slowPartServer) servePart(w http.ResponseWriter, r *http.Request, u *heldUpload) {
	u.started.Add(1)
	begun := sync.OnceFunc(u.started.Done)
	defer begun()
	const chunk = 64 << 10
	chunks := make(chan []byte, r.ContentLength/chunk+2) // never blocks the reading from the client
	var last []byte
	var readErr error
	go func() {
		defer close(chunks)
		rest := r.ContentLength - 1
		for rest > 0 && readErr == nil {
			buf := make([]byte, min(chunk, rest))
			var n int
			n, readErr = io.ReadFull(r.Body, buf)
			rest -= int64(n)
			chunks <- buf[:n]
		}
		if readErr == nil {
			last, readErr = io.ReadAll(r.Body) // reading to the end lets the proxy notice a client that goes
		}
	}()
	release := make(chan struct{})
	go func() {
		defer close(release)
		select {
		case <-time.After(s.partHold):
		case <-r.Context().Done():
			s.mu.Lock()
			s.dropped++
			s.mu.Unlock()
			waitFor(func() { <-u.aborted }, s.abortWait)
		}
	}()
	held := r.Clone(context.WithoutCancel(r.Context()))
	held.Body = io.NopCloser(&heldBody{chunks: chunks, begun: begun, release: release, last: func() ([]byte, error) { return last, readErr }})
	s.proxy.ServeHTTP(responseOnly{w}, held)
	for range chunks { // the reading from the client is over before the handler returns
	}
}

// heldBody yields the chunks of a part, then, once release is closed, its last byte.
type heldBody struct {
	chunks  <-chan []byte
	current []byte
	begun   func()
	release <-chan struct{}
	last    func() ([]byte, error) // valid once chunks is closed
	done    bool
}

func (b *heldBody) Read(p []byte) (int, error) {
	for len(b.current) == 0 {
		c, ok := <-b.chunks
		if !ok {
			return b.readLast(p)
		}
		b.current = c
	}
	n := copy(p, b.current)
	b.current = b.current[n:]
	return n, nil
}

func (b *heldBody) readLast(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	b.done = true
	last, err := b.last()
	if err != nil {
		return 0, err
	}
	b.begun()
	<-b.release
	return copy(p, last), io.EOF
}

// waitFor runs wait, giving up after timeout.
func waitFor(wait func(), timeout time.Duration) {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// responseOnly hides the connection of a response writer (http.CloseNotifier) from the reverse
// proxy, which would otherwise cancel the request to the server when its client has gone.
type responseOnly struct{ http.ResponseWriter }

// TestS3FailedUploadLeavesNoUploadBehindSlowServer fails the source of a multipart upload while its
// parts are still on the way to the server. Every part the server receives must be stored before the
// upload is aborted: a part the client abandons but the server stores after the abort recreates the
// multipart upload (versitygw; S3 documents the same: parts in progress during an abort may succeed),
// and its bytes stay in the bucket without any snapshot naming them.
func TestS3FailedUploadLeavesNoUploadBehindSlowServer(t *testing.T) {
	srv := s3server.Start(t)
	srv.CreateBucket(t, "slow")
	slow, endpoint := startSlowPartServer(t, srv, 3*time.Second)
	store, err := New(t.Context(), Config{
		Provider: "S3", Container: "slow", Prefix: "etcd", EndpointOverride: endpoint,
		SecretDir: s3SecretFor(t, srv), Upload: UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 2},
	}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })

	// Two whole parts go out while the third is read; the source fails within it.
	boom := errors.New("etcd snapshot stream broke")
	snap := snapshot.NewFull(12<<20, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	src := io.MultiReader(io.LimitReader(newGenerator(1), 12<<20), errAfter{boom})
	if err := store.Save(t.Context(), snap, src); !errors.Is(err, boom) {
		t.Fatalf("Save with a failing source: err = %v, want the source error", err)
	}
	slow.pending.Wait() // the server has answered everything it was sent

	slow.mu.Lock()
	dropped := slow.dropped
	slow.mu.Unlock()
	out, err := srv.Client().ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: aws.String("slow")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Errorf("%d multipart uploads left after the failed upload", len(out.Uploads))
	}
	// A part stored after the abort is not always listed (versitygw lists an upload by metadata the
	// abort removed), but its bytes stay in the bucket: look at the server's storage itself.
	if parts := filesUnder(t, srv.ObjectPath("slow", ".sgwtmp/multipart")); len(parts) != 0 {
		t.Errorf("parts left in the bucket's multipart storage after the failed upload: %v", parts)
	}
	if dropped != 0 {
		t.Errorf("the client gave up on %d parts on their way to the server", dropped)
	}
	if snaps := list(t, store); len(snaps) != 0 {
		t.Errorf("failed upload left %v", keys(snaps))
	}
}

// filesUnder lists the regular files under dir (none if dir does not exist).
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
