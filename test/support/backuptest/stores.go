package backuptest

import (
	"bytes"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// Prefix is the store prefix the tests use.
const Prefix = "etcd-main"

// Store is a store under test with a name for subtests.
type Store struct {
	snapstore.SnapStore
	// Name is the provider's name, for subtest names.
	Name string
}

// Kinds are the store constructors every round-trip test runs on: one directory store and one object
// store. AllProviders adds every other provider whose server starts here, for the tests that must show
// a feature works on each of them.
var Kinds = []func(t *testing.T) *Store{Local, S3}

// AllProviders are the constructors of a store on every provider whose test server is available; the
// constructors skip the test (with the reason) when a server cannot start on this machine.
var AllProviders = []func(t *testing.T) *Store{Local, S3, ABS, GCS, Swift, OSS, ECS, OCS}

// ForEach runs test in a subtest per constructor, named after the constructor (Local, S3, ABS, ...), with
// the store opened inside the subtest: a provider whose server cannot run here skips its subtest only.
func ForEach(t *testing.T, constructors []func(t *testing.T) *Store, test func(t *testing.T, store *Store)) {
	t.Helper()
	for _, newStore := range constructors {
		name := runtime.FuncForPC(reflect.ValueOf(newStore).Pointer()).Name()
		name = name[strings.LastIndex(name, ".")+1:]
		t.Run(name, func(t *testing.T) { test(t, newStore(t)) })
	}
}

// Local opens a directory store in a temporary directory.
func Local(t *testing.T) *Store {
	t.Helper()
	return open(t, "Local", LocalLocation(t).Config)
}

var buckets atomic.Int32

// S3 opens a store on a fresh bucket of a versitygw server started for the test.
func S3(t *testing.T) *Store {
	t.Helper()
	return open(t, "S3", S3Location(t).Config)
}

// OSS opens a store with an OSS secret on a fresh bucket of a versitygw server (OSS's S3-compatible API).
func OSS(t *testing.T) *Store {
	t.Helper()
	return open(t, "OSS", OSSLocation(t).Config)
}

// ECS opens a store with an ECS secret on a fresh bucket of a versitygw server.
func ECS(t *testing.T) *Store {
	t.Helper()
	return open(t, "ECS", ECSLocation(t).Config)
}

// OCS opens a store with an OCS secret on a fresh bucket of a versitygw server.
func OCS(t *testing.T) *Store {
	t.Helper()
	return open(t, "OCS", OCSLocation(t).Config)
}

// Swift opens a store on a fresh container of an OpenStack Swift started for the test; it skips the test
// when Swift is not installed (hack/stores/install-swift.sh installs it).
func Swift(t *testing.T) *Store {
	t.Helper()
	return open(t, "Swift", SwiftLocation(t).Config)
}

// ABS opens a store on a fresh container of an Azurite server started for the test (skipped without
// Node.js).
func ABS(t *testing.T) *Store {
	t.Helper()
	return open(t, "ABS", ABSLocation(t).Config)
}

// GCS opens a store on a fresh bucket of a fake-gcs-server started for the test.
func GCS(t *testing.T) *Store {
	t.Helper()
	return open(t, "GCS", GCSLocation(t).Config)
}

func open(t *testing.T, name string, cfg snapstore.Config) *Store {
	t.Helper()
	s, err := snapstore.New(t.Context(), cfg, logr.Discard())
	if err != nil {
		t.Fatalf("opening the %s store: %v", name, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &Store{SnapStore: s, Name: name}
}

// FlipByte corrupts a stored snapshot: it inverts the byte at offset of the object, rewriting the object
// through the store itself, so that it works on every provider. Flipping the same byte again repairs it.
func FlipByte(t *testing.T, store snapstore.SnapStore, snap *snapshot.Snapshot, offset int64) {
	t.Helper()
	flip(t, store, snap, func(int64) int64 { return offset })
}

// FlipMiddleByte inverts the byte in the middle of a stored snapshot (see FlipByte).
func FlipMiddleByte(t *testing.T, store snapstore.SnapStore, snap *snapshot.Snapshot) {
	t.Helper()
	flip(t, store, snap, func(size int64) int64 { return size / 2 })
}

func flip(t *testing.T, store snapstore.SnapStore, snap *snapshot.Snapshot, offset func(size int64) int64) {
	t.Helper()
	r, err := store.Fetch(t.Context(), snap)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil {
		t.Fatalf("reading %s: %v", snap, err)
	}
	at := offset(int64(len(data)))
	if at < 0 || at >= int64(len(data)) {
		t.Fatalf("offset %d is outside %s (%d bytes)", at, snap, len(data))
	}
	data[at] ^= 0xff
	if err := store.Save(t.Context(), snap, bytes.NewReader(data)); err != nil {
		t.Fatalf("rewriting %s: %v", snap, err)
	}
}
