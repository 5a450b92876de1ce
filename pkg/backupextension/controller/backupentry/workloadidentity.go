package backupentry

import (
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// Gardener's workload-identity wire names (security.gardener.cloud). gardenlet gives an entry secret this
// shape when the seed's backup credentials are a WorkloadIdentity, and its token requestor fills in the
// token of every secret on the seed that carries the purpose label.
const (
	// LabelPurpose with PurposeWorkloadIdentityTokenRequestor marks a secret whose `token` gardenlet's token
	// requestor keeps fresh.
	LabelPurpose = "security.gardener.cloud/purpose"
	// PurposeWorkloadIdentityTokenRequestor is the LabelPurpose value of a workload-identity secret.
	PurposeWorkloadIdentityTokenRequestor = "workload-identity-token-requestor"
	// WorkloadIdentityPrefix begins every workload-identity label and annotation key.
	WorkloadIdentityPrefix = "workloadidentity.security.gardener.cloud/"
	// LabelWorkloadIdentityProvider names the system the token is presented to (aws, gcp, …).
	LabelWorkloadIdentityProvider = WorkloadIdentityPrefix + "provider"
	// AnnotationWorkloadIdentityName and AnnotationWorkloadIdentityNamespace name the WorkloadIdentity the
	// token requestor issues the token for.
	AnnotationWorkloadIdentityName      = WorkloadIdentityPrefix + "name"
	AnnotationWorkloadIdentityNamespace = WorkloadIdentityPrefix + "namespace"
	// AnnotationWorkloadIdentityContextObject is the object the token is used for (optional).
	AnnotationWorkloadIdentityContextObject = WorkloadIdentityPrefix + "context-object"
	// AnnotationWorkloadIdentityTokenRenewTimestamp is the token requestor's own bookkeeping: when to renew.
	AnnotationWorkloadIdentityTokenRenewTimestamp = WorkloadIdentityPrefix + "token-renew-timestamp"
	// DataKeyWorkloadIdentityConfig is the provider's workload-identity configuration (for S3 the role).
	DataKeyWorkloadIdentityConfig = "config"
)

// workloadIdentity is what the etcd backup secret of a workload-identity entry carries for gardenlet's token
// requestor: the WorkloadIdentity's annotations and the purpose and provider labels.
type workloadIdentity struct {
	annotations map[string]string
	labels      map[string]string
}

// workloadIdentityOf reads the workload identity of an entry secret: nil for static credentials, an error
// naming the missing key when the secret is marked for the token requestor but does not say for which
// WorkloadIdentity or provider — without them no token would ever be written, and the sidecar would have
// no credentials.
func workloadIdentityOf(secret *corev1.Secret) (*workloadIdentity, error) {
	if !isWorkloadIdentity(secret) {
		return nil, nil
	}
	wi := &workloadIdentity{
		annotations: map[string]string{},
		labels:      map[string]string{LabelPurpose: PurposeWorkloadIdentityTokenRequestor},
	}
	key := client.ObjectKeyFromObject(secret)
	for _, required := range []string{AnnotationWorkloadIdentityName, AnnotationWorkloadIdentityNamespace} {
		value, ok := secret.Annotations[required]
		if !ok {
			return nil, fmt.Errorf("backup entry secret %s uses workload identity but has no annotation %s", key, required)
		}
		wi.annotations[required] = value
	}
	if value, ok := secret.Annotations[AnnotationWorkloadIdentityContextObject]; ok {
		wi.annotations[AnnotationWorkloadIdentityContextObject] = value
	}
	provider, ok := secret.Labels[LabelWorkloadIdentityProvider]
	if !ok {
		return nil, fmt.Errorf("backup entry secret %s uses workload identity but has no label %s", key, LabelWorkloadIdentityProvider)
	}
	wi.labels[LabelWorkloadIdentityProvider] = provider
	return wi, nil
}

func isWorkloadIdentity(secret *corev1.Secret) bool {
	return secret.Labels[LabelPurpose] == PurposeWorkloadIdentityTokenRequestor
}

// credentialsOf is the part of an entry secret that goes into the etcd backup secret and to the provider. Of
// a workload-identity secret that is only `config`: the token is the token requestor's to write into the
// etcd backup secret (a token copied from the entry secret would be another audience's, or stale), and any
// other key is no credential of this shape.
func credentialsOf(secret *corev1.Secret) map[string][]byte {
	if !isWorkloadIdentity(secret) {
		return secret.Data
	}
	credentials := map[string][]byte{}
	if config, ok := secret.Data[DataKeyWorkloadIdentityConfig]; ok {
		credentials[DataKeyWorkloadIdentityConfig] = config
	}
	return credentials
}

// tokenOf is the token gardenlet's token requestor wrote into a workload-identity entry secret, which the
// provider presents to delete the entry's backups; nil for static credentials.
func tokenOf(secret *corev1.Secret) []byte {
	if !isWorkloadIdentity(secret) {
		return nil
	}
	return secret.Data[backupsecret.KeyToken]
}

// applyTo hands the etcd backup secret to the token requestor, as Gardener's generic BackupEntry actuator
// does: labels are the purpose and provider only, annotations the WorkloadIdentity's plus the requestor's
// renew timestamp, and the token the requestor already wrote is kept, so a reconcile does not leave the
// sidecar without credentials until the next renewal. The caller writes with an optimistic lock, so a token
// the requestor writes concurrently is not lost either.
func (wi *workloadIdentity) applyTo(secret *corev1.Secret, data map[string][]byte) map[string][]byte {
	annotations := map[string]string{}
	if renew, ok := secret.Annotations[AnnotationWorkloadIdentityTokenRenewTimestamp]; ok {
		annotations[AnnotationWorkloadIdentityTokenRenewTimestamp] = renew
	}
	maps.Copy(annotations, wi.annotations)
	secret.Annotations = annotations
	secret.Labels = maps.Clone(wi.labels)
	data = maps.Clone(data)
	if token, ok := secret.Data[backupsecret.KeyToken]; ok {
		data[backupsecret.KeyToken] = token
	}
	return data
}

// dropWorkloadIdentity removes the workload-identity labels and annotations from an etcd backup secret that
// now carries static credentials, so the token requestor stops writing a token into it.
func dropWorkloadIdentity(meta *metav1.ObjectMeta) {
	delete(meta.Labels, LabelPurpose)
	maps.DeleteFunc(meta.Labels, func(k, _ string) bool { return strings.HasPrefix(k, WorkloadIdentityPrefix) })
	maps.DeleteFunc(meta.Annotations, func(k, _ string) bool { return strings.HasPrefix(k, WorkloadIdentityPrefix) })
}
