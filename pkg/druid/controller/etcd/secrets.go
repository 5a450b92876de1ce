package etcd

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// missingSecrets checks every requirement and describes each missing secret or key, e.g.
// `secret shoot/etcd-server (spec.etcd.clientUrlTls.serverTLSSecretRef) has no data for key(s) "tls.key"`, or
// for the backup secret `secret shoot/etcd-backup (spec.backup.store.secretRef, provider OSS) has no data
// for key(s) "accessKeySecret"`.
func missingSecrets(ctx context.Context, reader client.Reader, reqs []secretref.Reference) ([]string, error) {
	var missing []string
	for _, req := range reqs {
		secret := &corev1.Secret{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, secret)
		if apierrors.IsNotFound(err) {
			missing = append(missing, fmt.Sprintf("secret %s (%s) not found", req.Key(), req.Field))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading secret %s: %w", req.Key(), err)
		}
		if unmet := backupsecret.UnmetIn(req.Required, req.Provider, secret.Data); len(unmet) > 0 {
			where := req.Field
			if req.Provider != "" {
				where += ", provider " + string(req.Provider)
			}
			missing = append(missing, fmt.Sprintf("secret %s (%s) has no data for key(s) %s", req.Key(), where, backupsecret.Describe(unmet)))
		}
	}
	return missing, nil
}
