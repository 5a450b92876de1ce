package backupsecret

import (
	"encoding/json"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// GCSExternalAccountType is the "type" of a GCS credential file that is an external_account (workload
// identity) configuration rather than a service account key.
const GCSExternalAccountType = "external_account"

// ContentRequired is what a backup secret of provider must hold because of what it already holds: a GCS
// serviceaccount.json of type external_account reads its subject token from the secret's token file and
// names its project in projectID, as the upstream sidecar requires. Nil for every other secret.
func ContentRequired(provider druidv1alpha1.StorageProvider, data map[string][]byte) []Requirement {
	canonical, _ := druidv1alpha1.CanonicalStorageProvider(provider)
	if canonical != druidv1alpha1.StorageProviderGCS || GCSCredentialType(data[KeyServiceAccount]) != GCSExternalAccountType {
		return nil
	}
	return Keys(KeyProjectID, KeyToken)
}

// GCSCredentialType is the "type" field of a GCS credential file; empty when the file is not JSON.
func GCSCredentialType(file []byte) string {
	var doc struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(file, &doc) != nil {
		return ""
	}
	return doc.Type
}

// UnmetIn is what a secret's data lacks: the requirements reqs, and for a backup secret of provider (empty
// for other secrets) what its content asks for (ContentRequired). Druid's secrets gate and the Gardener
// side's check before Deploy both judge a secret by it.
func UnmetIn(reqs []Requirement, provider druidv1alpha1.StorageProvider, data map[string][]byte) []Requirement {
	if provider != "" {
		reqs = append(append([]Requirement{}, reqs...), ContentRequired(provider, data)...)
	}
	return Unmet(reqs, InData(data))
}

// AmbientCredentials tells whether the sidecar can reach a provider's store without a backup secret, with
// the pod's own identity through the provider SDK's default credential chain (EKS IRSA or the node's
// instance role for S3, GKE workload identity or the metadata server for GCS), as upstream druid allows
// an Etcd without spec.backup.store.secretRef. Local needs no credentials. The other providers' clients
// take their credentials only from the secret, so an Etcd without one could never back up.
func AmbientCredentials(provider druidv1alpha1.StorageProvider) bool {
	canonical, _ := druidv1alpha1.CanonicalStorageProvider(provider)
	switch canonical {
	case druidv1alpha1.StorageProviderS3, druidv1alpha1.StorageProviderGCS, druidv1alpha1.StorageProviderLocal:
		return true
	}
	return false
}
