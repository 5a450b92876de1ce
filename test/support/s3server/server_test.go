package s3server

import (
	"context"
	"io"
	"net/http/httptrace"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
)

func TestServerLifecycle(t *testing.T) {
	s, err := StartProcess(Options{})
	childproc.SkipIfShortAndMissing(t, "the S3 server test", err)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.CreateBucketE(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("a/b"), Body: strings.NewReader("hello")})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	onDisk, err := os.ReadFile(s.ObjectPath("bkt", "a/b"))
	if err != nil || string(onDisk) != "hello" {
		t.Fatalf("object file: %q, %v", onDisk, err)
	}
	out, err := s.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("a/b")})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	body, _ := io.ReadAll(out.Body)
	_ = out.Body.Close()
	if string(body) != "hello" {
		t.Fatalf("get returned %q", body)
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	default:
		t.Fatal("process still running after Stop")
	}
	if _, err := os.Stat(s.tmp); !os.IsNotExist(err) {
		t.Fatalf("backend dir %s still exists after Stop: %v", s.tmp, err)
	}
	if _, err := s.Client().ListBuckets(ctx, &s3.ListBucketsInput{}, func(o *s3.Options) { o.RetryMaxAttempts = 1 }); err == nil {
		t.Fatal("server still answers after Stop")
	}
}

func TestTLSServer(t *testing.T) {
	s := StartWithOptions(t, Options{TLS: true})
	if !strings.HasPrefix(s.Endpoint, "https://") || len(s.CACertPEM) == 0 {
		t.Fatalf("TLS server has endpoint %s and %d bytes of CA", s.Endpoint, len(s.CACertPEM))
	}
	s.CreateBucket(t, "secure")
	if _, err := s.Client().HeadBucket(t.Context(), &s3.HeadBucketInput{Bucket: aws.String("secure")}); err != nil {
		t.Fatalf("head bucket over TLS: %v", err)
	}
}

// TestStopWithAnUnusedClientConnection stops a server while one of its clients holds a connection that
// never carried a request: what a request cancelled while dialing leaves in the client's pool (the
// dial goes on and the connection is kept for later). versitygw waits for such a connection for its
// whole shutdown timeout (10 s), so Stop must close its clients' idle connections first.
func TestStopWithAnUnusedClientConnection(t *testing.T) {
	s, err := StartProcess(Options{})
	childproc.SkipIfShortAndMissing(t, "the S3 server test", err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() }) // a second Stop does nothing
	s.transport.CloseIdleConnections() // the request below must dial, not reuse a health check's connection
	for attempt := 1; !leaveUnusedConnection(t, s); attempt++ {
		if attempt == 5 {
			t.Fatal("every cancelled request got its connection: no unused connection to test with")
		}
	}

	// Stop fails when versitygw had to be killed for not exiting on SIGTERM. versitygw waits up to 10 s for
	// every open connection before it exits; with the kill after 5 s, a server still holding the unused
	// connection is killed and Stop fails, while one whose connections Stop closed exits on SIGTERM at
	// once. How long Stop took is logged.
	s.killAfter = 5 * time.Second
	start := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("DURATION Stop with an unused client connection: %s", time.Since(start).Round(time.Millisecond))
}

// leaveUnusedConnection sends a request that is cancelled as soon as it starts to dial, and tells
// whether the dialed connection went to the pool unused (rarely the dial wins the race and the
// cancelled request takes the connection).
func leaveUnusedConnection(t *testing.T, s *Server) bool {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dialed := make(chan struct{})
	var used atomic.Bool
	traced := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		ConnectStart: func(string, string) { cancel() },
		ConnectDone:  func(string, string, error) { close(dialed) },
		GotConn:      func(httptrace.GotConnInfo) { used.Store(true) },
	})
	if _, err := s.Client().ListBuckets(traced, &s3.ListBucketsInput{}); err == nil {
		t.Fatal("a request cancelled while dialing succeeded")
	}
	select {
	case <-dialed:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled request's dial did not finish")
	}
	return !used.Load()
}
