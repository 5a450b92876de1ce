// Package azurite runs a real Azure Blob Storage server for tests: Azurite's blob service, installed from
// npm into bin/azurite-blob by `make tools`, on 127.0.0.1 with in-memory persistence. Storage code is so
// exercised against the Blob REST API (block uploads, shared-key signing) rather than a mock. Every server
// gets a free port and a fresh account with a random key, and is stopped when the test ends.
//
// Azurite is a Node.js program: on a machine without node, Start skips the test and says why.
package azurite

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
)

// BinaryEnv overrides where the azurite-blob executable is looked up, for runs outside the repository.
const BinaryEnv = "AZURITE_BLOB_BIN"

// Account is the storage account every server has (Azurite addresses accounts by path).
const Account = "gardeneretcd"

// Server is a running Azurite blob service.
type Server struct {
	// Endpoint is the service URL without the account, e.g. http://127.0.0.1:34567: the ABS store's
	// endpoint override, to which the store appends /<account>/<container>.
	Endpoint string
	// Account and Key are the shared-key credentials (the key base64, as Azure shows it).
	Account, Key string

	proc *childproc.Process
	tmp  string
}

// Start runs a server for t and stops it at the end of the test. Without node on the PATH the test is
// skipped: the ABS emulator cannot run here (`make tools` says so too).
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("Azurite (the ABS emulator) needs Node.js, which is not on the PATH: %v", err)
	}
	return childproc.ForTest(t, "Azurite", StartProcess)
}

// StartProcess runs a server outside a test's lifetime; the caller must Stop it.
func StartProcess() (*Server, error) {
	bin, err := childproc.FindBinary("azurite-blob", BinaryEnv)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 64)
	_, _ = rand.Read(key)
	return childproc.StartRetrying(func() (*Server, error) { return tryStart(bin, base64.StdEncoding.EncodeToString(key)) })
}

func tryStart(bin, key string) (*Server, error) {
	port, err := freeport.Reserve()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "azurite-")
	if err != nil {
		return nil, err
	}
	s := &Server{Endpoint: "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Account: Account, Key: key, tmp: tmp}
	s.proc, err = childproc.Start(childproc.Spec{
		Binary: bin,
		Args: []string{
			"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port),
			"--inMemoryPersistence", "--silent",
			// The Go SDK (azblob v1.8.3) asks for service version 2026-12-06, newer than this Azurite's
			// 2026-06-06, which it would refuse; the operations the store uses are the same in both.
			"--skipApiVersionCheck",
			// Accounts are addressed by the first path segment only, whatever the host name.
			"--disableProductStyleUrl",
			// No usage reports to the outside world (and no waiting for an unreachable host).
			"--disableTelemetry",
		},
		Env:             []string{"AZURITE_ACCOUNTS=" + Account + ":" + key},
		DropEnvPrefixes: []string{"AZURITE_"},
		Dir:             tmp,
		// Any HTTP answer (an unsigned request is refused) means the service is up.
		Ready: childproc.HTTPReady(s.Endpoint + "/" + Account + "?comp=list"),
	})
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	return s, nil
}

// Stop terminates the server and removes its working directory.
func (s *Server) Stop() error {
	return errors.Join(s.proc.Stop(), os.RemoveAll(s.tmp))
}

// ServiceURL is the account's blob service URL, http://127.0.0.1:<port>/<account>/.
func (s *Server) ServiceURL() string {
	return s.Endpoint + "/" + s.Account + "/"
}

// Client is a shared-key client of the account, for test set-up and checks behind a store's back.
func (s *Server) Client() (*azblob.Client, error) {
	cred, err := azblob.NewSharedKeyCredential(s.Account, s.Key)
	if err != nil {
		return nil, err
	}
	return azblob.NewClientWithSharedKeyCredential(s.ServiceURL(), cred, nil)
}

// TestClient is Client or fails the test.
func (s *Server) TestClient(t testing.TB) *azblob.Client {
	t.Helper()
	c, err := s.Client()
	if err != nil {
		t.Fatalf("ABS client for %s: %v", s.ServiceURL(), err)
	}
	return c
}

// CreateContainer creates a container or fails the test.
func (s *Server) CreateContainer(t testing.TB, name string) {
	t.Helper()
	if err := s.CreateContainerE(t.Context(), name); err != nil {
		t.Fatal(err)
	}
}

// CreateContainerE creates a container, for callers without a testing.TB.
func (s *Server) CreateContainerE(ctx context.Context, name string) error {
	c, err := s.Client()
	if err != nil {
		return err
	}
	if _, err := c.CreateContainer(ctx, name, nil); err != nil {
		return fmt.Errorf("creating container %q on %s: %w", name, s.ServiceURL(), err)
	}
	return nil
}
