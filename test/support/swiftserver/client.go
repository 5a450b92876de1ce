package swiftserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
)

// Token logs in and returns a token.
func (s *Server) Token(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.AuthURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Auth-User", s.User)
	req.Header.Set("X-Auth-Key", s.Key)
	resp, err := s.http.Do(req)
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Auth-Token") == "" {
		return "", fmt.Errorf("login at %s: %s", s.AuthURL, resp.Status)
	}
	return resp.Header.Get("X-Auth-Token"), nil
}

// do sends a request without a body to StorageURL + path and expects a 2xx answer.
func (s *Server) do(ctx context.Context, token, method, path string) error {
	req, err := http.NewRequestWithContext(ctx, method, s.StorageURL+path, http.NoBody)
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", token)
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return nil
}

// CreateContainer creates a container or fails the test.
func (s *Server) CreateContainer(t testing.TB, name string) {
	t.Helper()
	token, err := s.Token(t.Context())
	if err == nil {
		err = s.do(t.Context(), token, http.MethodPut, "/"+name)
	}
	if err != nil {
		t.Fatalf("creating container %s: %v", name, err)
	}
}

// ObjectFile is the file holding an object's data on the object server, for tests that corrupt it
// behind Swift's back. The file is found by its metadata, which names the object (the directory is a hash
// salted by swift.conf, and Debian's /etc/swift/swift.conf wins over the server's own).
func (s *Server) ObjectFile(container, object string) (string, error) {
	files, err := filepath.Glob(filepath.Join(s.devices, "d1", "objects", "*", "*", "*", "*.data"))
	if err != nil {
		return "", err
	}
	name := "/" + Account + "/" + container + "/" + object
	for _, f := range files {
		meta := make([]byte, 64<<10)
		n, err := syscall.Getxattr(f, "user.swift.metadata", meta)
		if err != nil {
			return "", fmt.Errorf("reading the metadata of %s: %w", f, err)
		}
		if pickledString(meta[:n], name) {
			return f, nil
		}
	}
	return "", fmt.Errorf("object %s/%s: no .data file among %d has it in its metadata", container, object, len(files))
}

// pickledString tells whether a Python pickle holds the string s: as SHORT_BINUNICODE (0x8c, one length
// byte) or BINUNICODE ('X', four length bytes, little endian), so that a name does not match a longer one.
func pickledString(pickle []byte, s string) bool {
	var short, long []byte
	if len(s) < 256 {
		short = append([]byte{0x8c, byte(len(s))}, s...)
	}
	long = binary.LittleEndian.AppendUint32([]byte{'X'}, uint32(len(s)))
	long = append(long, s...)
	return (short != nil && bytes.Contains(pickle, short)) || bytes.Contains(pickle, long)
}
