package initializer

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
)

// ErrNoValidData reports a data directory that holds no usable etcd data: missing, empty, incomplete
// or corrupt. Its message says which.
var ErrNoValidData = errors.New("no valid etcd data")

// DataCopy is a throwaway etcd serving a copy of a member's data directory, for reading what the
// member holds — its revision, a full snapshot — without starting the member itself: the quorum-loss
// recovery asks every surviving volume how far it got and saves the most advanced one to the store
// before any volume is deleted (docs/design.md, "Quorum-loss recovery").
type DataCopy struct {
	etcd    *embed.Etcd
	scratch string
}

// StartOnCopy inspects dataDir, copies its member directory into a new directory below scratchParent
// and starts a throwaway etcd on the copy, listening on loopback only; the data directory is only
// read, so it may be mounted read-only. A directory without valid data is an error wrapping
// ErrNoValidData; one written by an etcd this one cannot open (CheckDataVersion) wraps etcddata.ErrDataVersion.
//
// The revision the copy serves is the one the member would serve: the WAL is replayed. A one-member
// membership restarts as it is; the copy of a member of a larger cluster is started with
// --force-new-cluster (the others are gone when this runs; the copy must not dial them), which applies
// every entry this member knew as committed and drops the rest — entries it never learnt were
// committed, which its own restart would not apply alone either.
func StartOnCopy(ctx context.Context, dataDir, scratchParent string) (*DataCopy, error) {
	facts := InspectDataDir(dataDir, "", true)
	switch {
	case !facts.HasMember:
		return nil, fmt.Errorf("%w: %s holds no member directory", ErrNoValidData, dataDir)
	case !facts.DataValid:
		return nil, fmt.Errorf("%w in %s: %s", ErrNoValidData, dataDir, facts.Problem)
	}
	db, err := etcddata.ReadDB(dbPath(dataDir))
	if err != nil {
		return nil, fmt.Errorf("%w in %s: database: %v", ErrNoValidData, dataDir, err)
	}
	// Data of an older etcd is valid data this etcd cannot open (it would panic in this process): an
	// error of its own, not ErrNoValidData, so that no caller takes the volume for empty.
	if err := etcddata.CheckDataVersion(dataDir); err != nil {
		return nil, err
	}
	e, scratch, err := startOnCopy(ctx, dataDir, scratchParent, func(cfg *embed.Config) {
		// The member's name and peer URLs are in its membership; the copy's are its own, on loopback.
		peer := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
		cfg.Name, cfg.AdvertisePeerUrls = "data-copy", []url.URL{peer}
		cfg.InitialCluster = cfg.Name + "=" + peer.String()
		cfg.ForceNewCluster = db.Members > 1
	})
	if err != nil {
		return nil, err
	}
	return &DataCopy{etcd: e, scratch: scratch}, nil
}

// Revision is the revision the copy serves.
func (c *DataCopy) Revision() int64 { return c.etcd.Server.KV().Rev() }

// Client connects to the copy (loopback); the caller closes it.
func (c *DataCopy) Client() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints: []string{"http://" + c.etcd.Clients[0].Addr().String()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
	})
}

// Close stops the throwaway etcd and removes the copy (never the original data directory).
func (c *DataCopy) Close() error {
	c.etcd.Close()
	return os.RemoveAll(c.scratch)
}
