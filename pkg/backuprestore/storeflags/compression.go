package storeflags

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Compression binds --compress-snapshots and --compression-policy: how new snapshots are written. Every
// command that writes snapshots (server, snapshot, compact) binds it, so that the compaction Job writes
// what the sidecar would.
type Compression struct {
	enabled bool
	policy  string
}

// BindCompression registers the compression flags on fs with the upstream sidecar's defaults
// (compression off, policy gzip when on).
func BindCompression(fs *pflag.FlagSet) *Compression {
	c := &Compression{policy: string(snapshot.CompressionGzip)}
	fs.BoolVar(&c.enabled, podwire.FlagCompressSnapshots, false, "compress new snapshots")
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
