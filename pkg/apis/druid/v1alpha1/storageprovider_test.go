package v1alpha1

import (
	"slices"
	"testing"
)

func TestCanonicalStorageProvider(t *testing.T) {
	for in, want := range map[StorageProvider]StorageProvider{
		"Local": "Local", "S3": "S3", "aws": "S3", "ABS": "ABS", "azure": "ABS", "GCS": "GCS", "gcp": "GCS", "Swift": "Swift",
		"openstack": "Swift", "OSS": "OSS", "alicloud": "OSS", "ECS": "ECS", "dell": "ECS", "OCS": "OCS", "openshift": "OCS",
	} {
		if got, ok := CanonicalStorageProvider(in); !ok || got != want {
			t.Errorf("CanonicalStorageProvider(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []StorageProvider{"", "local", "s3", "oss", "ftp"} {
		if got, ok := CanonicalStorageProvider(in); ok {
			t.Errorf("CanonicalStorageProvider(%q) = %q, want unknown (names are case-sensitive)", in, got)
		}
	}
	if known := KnownStorageProviders(); len(known) != 15 || !slices.IsSorted(known) {
		t.Errorf("KnownStorageProviders() = %v, want the 15 names sorted", known)
	}
}
