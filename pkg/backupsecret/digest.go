package backupsecret

import "encoding/json"

// presentValue stands for a non-empty value in a Digest.
var presentValue = []byte{1}

// Digest is data reduced to what UnmetIn reads: every key, its value replaced by one byte when it is not
// empty (InData asks only whether it is), and a GCS credential file by its "type" alone (ContentRequired
// asks only for that). UnmetIn judges a digest as it judges the data, for every requirement and provider,
// so that druid can keep digests of Secrets in its cache, and judge referenced secrets from there, without
// holding a credential or a private key in memory.
func Digest(data map[string][]byte) map[string][]byte {
	if data == nil {
		return nil
	}
	digest := make(map[string][]byte, len(data))
	for key, value := range data {
		switch {
		case len(value) == 0:
			digest[key] = nil
		case key == KeyServiceAccount && GCSCredentialType(value) != "":
			typed, _ := json.Marshal(struct {
				Type string `json:"type"`
			}{GCSCredentialType(value)})
			digest[key] = typed
		default:
			digest[key] = presentValue
		}
	}
	return digest
}
