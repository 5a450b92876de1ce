package backupsecret

import (
	"testing"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// An S3 secret holds static keys or, as Gardener's provider extension writes it for workload identity, a
// role to assume with the token file; both need the region.
func TestS3WorkloadIdentityShape(t *testing.T) {
	for name, tc := range map[string]struct {
		data map[string][]byte
		want string
	}{
		"static keys":       {data(KeyAccessKeyID, KeySecretAccessKey, KeyRegion), ""},
		"workload identity": {data(KeyRoleARN, KeyToken, KeyRegion, "config"), ""},
		"token not yet written": {data(KeyRoleARN, KeyRegion),
			`("accessKeyID" and "secretAccessKey") or ("roleARN" and "token")`},
		"no region": {data(KeyRoleARN, KeyToken), `"region"`},
	} {
		if got := Describe(UnmetIn(Required(druidv1alpha1.StorageProviderAWS), druidv1alpha1.StorageProviderS3, tc.data)); got != tc.want {
			t.Errorf("%s: unmet %s, want %s", name, got, tc.want)
		}
	}
}

// A GCS serviceaccount.json of type external_account (workload identity) reads its subject token from the
// secret's token file and names its project in projectID; a service account key needs neither.
func TestGCSWorkloadIdentityShape(t *testing.T) {
	external := []byte(`{"type":"external_account","audience":"a"}`)
	key := []byte(`{"type":"service_account","project_id":"p"}`)
	for name, tc := range map[string]struct {
		data map[string][]byte
		want string
	}{
		"service account key": {map[string][]byte{KeyServiceAccount: key}, ""},
		"workload identity": {map[string][]byte{KeyServiceAccount: external, KeyCredentialsConfig: external,
			KeyProjectID: []byte("my-project"), KeyToken: []byte("jwt")}, ""},
		"token not yet written": {map[string][]byte{KeyServiceAccount: external, KeyProjectID: []byte("my-project")}, `"token"`},
		"no project":            {map[string][]byte{KeyServiceAccount: external, KeyToken: []byte("jwt")}, `"projectID"`},
		"only credentialsConfig": {map[string][]byte{KeyCredentialsConfig: external, KeyProjectID: []byte("p"), KeyToken: []byte("t")},
			`"serviceaccount.json"`},
	} {
		if got := Describe(UnmetIn(Required(druidv1alpha1.StorageProviderGCP), druidv1alpha1.StorageProviderGCS, tc.data)); got != tc.want {
			t.Errorf("%s: unmet %s, want %s", name, got, tc.want)
		}
	}
}

// Without a backup secret the sidecar uses the pod's own identity through the provider SDK's default
// chain; only S3 and GCS have one (and Local needs no credentials).
func TestAmbientCredentials(t *testing.T) {
	for provider, want := range map[druidv1alpha1.StorageProvider]bool{
		"aws": true, "S3": true, "gcp": true, "GCS": true, "Local": true,
		"azure": false, "openstack": false, "alicloud": false, "ECS": false, "OCS": false,
	} {
		if got := AmbientCredentials(provider); got != want {
			t.Errorf("AmbientCredentials(%s) = %v, want %v", provider, got, want)
		}
	}
}

func data(keys ...string) map[string][]byte {
	d := map[string][]byte{}
	for _, k := range keys {
		d[k] = []byte("v")
	}
	return d
}
