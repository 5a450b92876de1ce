package storeflags

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Compression binds --compress-snapshots and --compression-policy: how new snapshots are written. The
// commands that write snapshots from a running or preserved etcd (server, snapshot, preserve-data) bind it;
// compact writes like the snapshots it replaces.
type Compression struct {
	enabled bool
	policy  string
}

// BindCompression registers the compression flags on fs with upstream etcd-backup-restore's defaults
// (pkg/compressor: compressed, gzip), so a command given upstream's arguments writes what upstream's would.
func BindCompression(fs *pflag.FlagSet) *Compression {
	c := &Compression{enabled: true, policy: string(snapshot.CompressionGzip)}
	fs.BoolVar(&c.enabled, podwire.FlagCompressSnapshots, c.enabled, "compress new snapshots")
	fs.StringVar(&c.policy, podwire.FlagCompressionPolicy, c.policy, "codec of compressed snapshots: gzip, lzw or zlib")
	return c
}

// Compression is the codec new snapshots are written with; an unknown policy is an error even when
// compression is off, so a typo never waits for the day it is switched on.
func (c *Compression) Compression() (snapshot.Compression, error) {
	codec, err := snapshot.ParseCompressionPolicy(c.policy)
	if err != nil {
		return "", fmt.Errorf("--compression-policy: %w", err)
	}
	if !c.enabled {
		return snapshot.CompressionNone, nil
	}
	return codec, nil
}
