package storeflags

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// The compression flags default as upstream etcd-backup-restore's (pkg/compressor: compress-snapshots true,
// compression-policy gzip), so a command run with upstream's arguments writes what upstream's would.
func TestCompressionDefaultsAsUpstream(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want snapshot.Compression
	}{
		{args: nil, want: snapshot.CompressionGzip},
		{args: []string{"--compression-policy=zlib"}, want: snapshot.CompressionZlib},
		{args: []string{"--compress-snapshots=false"}, want: snapshot.CompressionNone},
		{args: []string{"--compress-snapshots=true", "--compression-policy=lzw"}, want: snapshot.CompressionLZW},
	} {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		c := BindCompression(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got, err := c.Compression()
		if err != nil || got != tc.want {
			t.Errorf("%v: compression %q (%v), want %q", tc.args, got, err, tc.want)
		}
	}
}
