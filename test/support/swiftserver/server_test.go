package swiftserver

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestSwiftServerLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the Swift server under -short")
	}
	s, err := StartProcess()
	if err != nil {
		if err := Available(); err != nil {
			t.Skip(err.Error())
		}
		t.Fatal(err)
	}
	ctx := t.Context()
	s.CreateContainer(t, "bkt")
	token, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, s.StorageURL+"/bkt/a/b", strings.NewReader("hello"))
	req.Header.Set("X-Auth-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("put: %v %v", resp, err)
	}
	_ = resp.Body.Close()
	file, err := s.ObjectFile("bkt", "a/b")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "hello" {
		t.Fatalf("object file %s: %q, %v", file, data, err)
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range s.procs {
		select {
		case <-p.exited:
		default:
			t.Fatalf("%s still running after Stop", p.name)
		}
	}
	if _, err := os.Stat(s.tmp); !os.IsNotExist(err) {
		t.Fatalf("directory %s still exists after Stop: %v", s.tmp, err)
	}
	if _, err := s.Token(ctx); err == nil {
		t.Fatal("server still answers after Stop")
	}
}
