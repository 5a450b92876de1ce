package backupsecret

import (
	"testing"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// UnmetIn finds the same gaps in a secret's Digest as in its data, for every provider's requirements.
func TestUnmetInJudgesTheDigestAsTheData(t *testing.T) {
	secrets := map[string]map[string][]byte{
		"complete S3":             {KeyAccessKeyID: []byte("AKIA"), KeySecretAccessKey: []byte("s3cr3t"), KeyRegion: []byte("eu-1")},
		"empty secret key":        {KeyAccessKeyID: []byte("AKIA"), KeySecretAccessKey: nil, KeyRegion: []byte("eu-1")},
		"GCS service account":     {KeyServiceAccount: []byte(`{"type":"service_account","private_key":"-----BEGIN"}`)},
		"GCS external account":    {KeyServiceAccount: []byte(`{"type":"external_account","audience":"x"}`)},
		"GCS external with token": {KeyServiceAccount: []byte(`{"type":"external_account"}`), KeyProjectID: []byte("p"), KeyToken: []byte("t")},
		"GCS file not JSON":       {KeyServiceAccount: []byte("not json")},
		"no data":                 nil,
	}
	providers := []druidv1alpha1.StorageProvider{"", "S3", "aws", "GCS", "gcp", "ABS", "Swift", "OSS", "ECS", "OCS", "Local"}
	for name, data := range secrets {
		for _, provider := range providers {
			reqs := Required(provider)
			got, want := Describe(UnmetIn(reqs, provider, Digest(data))), Describe(UnmetIn(reqs, provider, data))
			if got != want {
				t.Errorf("%s, provider %q: digest lacks %s, data lacks %s", name, provider, got, want)
			}
		}
	}
}

// A digest holds no value of the data: only one byte per non-empty key, and a GCS file's type.
func TestDigestDropsTheValues(t *testing.T) {
	digest := Digest(map[string][]byte{
		KeySecretAccessKey: []byte("s3cr3t"),
		KeyServiceAccount:  []byte(`{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----"}`),
		KeyRegion:          {},
	})
	if got := string(digest[KeySecretAccessKey]); got != "\x01" {
		t.Errorf("secret access key digested to %q, want one byte", got)
	}
	if got := string(digest[KeyServiceAccount]); got != `{"type":"service_account"}` {
		t.Errorf("service account file digested to %q, want its type alone", got)
	}
	if v, ok := digest[KeyRegion]; !ok || len(v) != 0 {
		t.Errorf("empty region digested to %q (present %t), want an empty value", v, ok)
	}
}
