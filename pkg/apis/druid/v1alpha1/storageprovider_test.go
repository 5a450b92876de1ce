package v1alpha1

import (
	"slices"
	"testing"
)

func TestCanonicalStorageProvider(t *testing.T) {
	for in, want := range map[StorageProvider]StorageProvider{
		"Local": "Local", "S3": "S3", "aws": "S3", "ABS": "ABS", "azure": "ABS", "GCS": "GCS", "gcp": "GCS", "Swift": "Swift",
		"openstack": "Swift", "OSS": "OSS", "alicloud": "OSS", "ECS": "ECS", "dell": "ECS", "OCS": "OCS", "openshift": "OCS",
		// Names Etcds written for upstream etcd-druid carry.
		"stackit": "S3", "local": "Local", "s3": "S3", "abs": "ABS", "gcs": "GCS", "swift": "Swift", "oss": "OSS", "ecs": "ECS", "ocs": "OCS",
	} {
		if got, ok := CanonicalStorageProvider(in); !ok || got != want {
			t.Errorf("CanonicalStorageProvider(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []StorageProvider{"", "LOCAL", "Aws", "s3 ", "ftp"} {
		if got, ok := CanonicalStorageProvider(in); ok {
			t.Errorf("CanonicalStorageProvider(%q) = %q, want unknown (names are case-sensitive)", in, got)
		}
	}
	if known := KnownStorageProviders(); len(known) != 24 || !slices.IsSorted(known) {
		t.Errorf("KnownStorageProviders() = %v, want the 24 names sorted", known)
	}
}

func TestLowerCaseStorageProvider(t *testing.T) {
	for in, want := range map[StorageProvider]bool{
		"s3": true, "abs": true, "gcs": true, "swift": true, "oss": true, "ecs": true, "ocs": true,
		"local": false, "S3": false, "aws": false, "stackit": false, "Local": false, "ftp": false,
	} {
		if got := LowerCaseStorageProvider(in); got != want {
			t.Errorf("LowerCaseStorageProvider(%q) = %v, want %v", in, got, want)
		}
	}
}
