package gcsserver

import (
	"context"
	"io"
	"os"
	"testing"
	"time"
)

func TestServerLifecycle(t *testing.T) {
	s := Start(t)
	ctx := t.Context()
	s.CreateBucket(t, "bkt")
	c := s.TestClient(t)
	w := c.Bucket("bkt").Object("a/b").NewWriter(ctx)
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("upload: %v", err)
	}
	r, err := c.Bucket("bkt").Object("a/b").NewReader(ctx)
	if err != nil {
		t.Fatalf("download: %v", err)
	}
	body, _ := io.ReadAll(r)
	_ = r.Close()
	if string(body) != "hello" {
		t.Fatalf("download returned %q", body)
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if !s.proc.Exited() {
		t.Fatal("process still running after Stop")
	}
	if _, err := os.Stat(s.tmp); !os.IsNotExist(err) {
		t.Fatalf("working dir %s still exists after Stop: %v", s.tmp, err)
	}
	// The client retries refused connections until its context ends.
	gone, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.Bucket("bkt").Attrs(gone); err == nil {
		t.Fatal("server still answers after Stop")
	}
}
