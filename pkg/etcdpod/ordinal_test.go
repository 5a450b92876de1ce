package etcdpod

import "testing"

func TestOrdinalAfter(t *testing.T) {
	for name, want := range map[string]int{"etcd-main-0": 0, "etcd-main-2": 2, "etcd-main-10": 10} {
		if got, ok := OrdinalAfter(name, "etcd-main-"); !ok || got != want {
			t.Errorf("OrdinalAfter(%q) = %d, %v; want %d, true", name, got, ok, want)
		}
	}
	for _, name := range []string{"etcd-main-", "etcd-main-01", "etcd-main-+1", "etcd-main--1", "etcd-main-x", "etcd-events-1", "etcd-main-1-0"} {
		if got, ok := OrdinalAfter(name, "etcd-main-"); ok {
			t.Errorf("OrdinalAfter(%q) = %d, true; want false", name, got)
		}
	}
}

func TestTrailingOrdinal(t *testing.T) {
	for name, want := range map[string]int{"etcd-main-2": 2, "garden-etcd-main-0": 0, "x-12": 12} {
		if got, ok := TrailingOrdinal(name); !ok || got != want {
			t.Errorf("TrailingOrdinal(%q) = %d, %v; want %d, true", name, got, ok, want)
		}
	}
	for _, name := range []string{"", "etcd", "2", "etcd-", "etcd-main-01", "etcd-main-+1", "etcd-main-x"} {
		if got, ok := TrailingOrdinal(name); ok {
			t.Errorf("TrailingOrdinal(%q) = %d, true; want false", name, got)
		}
	}
}
