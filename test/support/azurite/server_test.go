package azurite

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

func TestServerLifecycle(t *testing.T) {
	s := Start(t) // skips without node
	ctx := t.Context()
	s.CreateContainer(t, "bkt")
	c := s.TestClient(t)
	if _, err := c.UploadBuffer(ctx, "bkt", "a/b", []byte("hello"), nil); err != nil {
		t.Fatalf("upload: %v", err)
	}
	resp, err := c.DownloadStream(ctx, "bkt", "a/b", nil)
	if err != nil {
		t.Fatalf("download: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !bytes.Equal(body, []byte("hello")) {
		t.Fatalf("download returned %q", body)
	}
	// A wrong key is refused: the server checks shared-key signatures.
	wrong, err := azblob.NewSharedKeyCredential(s.Account, "d3Jvbmc=")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := azblob.NewClientWithSharedKeyCredential(s.ServiceURL(), wrong, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.DownloadStream(ctx, "bkt", "a/b", nil); err == nil {
		t.Fatal("a request signed with a wrong key succeeded")
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
	if _, err := c.DownloadStream(ctx, "bkt", "a/b", nil); err == nil {
		t.Fatal("server still answers after Stop")
	}
}
