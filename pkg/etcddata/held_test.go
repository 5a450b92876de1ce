package etcddata

import "testing"

func TestWrittenBy35OrOlder(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    DataVersion
		want bool
	}{
		{"etcd 3.4 database", DataVersion{ConsistentIndex: 9}, true},
		{"etcd 3.5 WAL with v2 requests", DataVersion{Term: true, ConsistentIndex: 9, LegacyEntries: 2}, true},
		{"etcd 3.5 cluster", DataVersion{Term: true, ConsistentIndex: 9, ClusterVersion: "3.5.0"}, true},
		{"etcd 3.4 cluster", DataVersion{ConsistentIndex: 9, ClusterVersion: "3.4.0"}, true},
		{"etcd 3.6 data", DataVersion{StorageVersion: "3.6.0", Term: true, ConsistentIndex: 9}, false},
		{"etcd 3.7 data", DataVersion{StorageVersion: "3.7.0", Term: true, ConsistentIndex: 9, ClusterVersion: "3.7.0"}, false},
		{"3.5 data after a 3.6 run", DataVersion{StorageVersion: "3.6.0", Term: true, ConsistentIndex: 9, LegacyEntries: 2}, false},
		{"etcd 3.6 cluster before its storage version", DataVersion{Term: true, ConsistentIndex: 9, ClusterVersion: "3.6.0"}, false},
		// A newer etcd before its version monitor wrote the storage version, or our etcdutl restore.
		{"term, nothing decided", DataVersion{Term: true, ConsistentIndex: 9}, false},
		{"term, placeholder cluster version", DataVersion{Term: true, ConsistentIndex: 9, ClusterVersion: "3.0.0"}, false},
		{"placeholder cluster version, v2 requests", DataVersion{Term: true, ConsistentIndex: 9, ClusterVersion: "3.0.0", LegacyEntries: 1}, true},
		{"empty database", DataVersion{}, false},
	} {
		if got := tc.v.WrittenBy35OrOlder(); got != tc.want {
			t.Errorf("%s: WrittenBy35OrOlder() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
