package seedworkflow

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/chartrender"
	"github.com/gardener-etcd/gardener-etcd/pkg/imageref"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhookcert"
)

// Names of the backup extension's release.
const (
	// ExtensionName is the release name: Deployment, Service and ServiceAccount are called so.
	ExtensionName = "gardener-extension-backup"
	// ExtensionWebhookSecretName holds the serving certificate of the EnsureETCD webhook.
	ExtensionWebhookSecretName = "gardener-extension-backup-webhook-server"
	fieldOwner                 = "gardener-etcd-demo"
)

// BootstrapBackupExtension installs the BackupBucket/BackupEntry CRDs and the backup extension from its chart
// (provider s3 only: the demo's buckets live on the seed's S3 server) with a fresh webhook certificate, and
// waits until the CRDs are established and the Deployment is available. The EnsureETCD webhook fails
// closed, so the extension must serve before any Etcd is written.
func BootstrapBackupExtension(ctx context.Context, env *Env) (string, error) {
	crds, err := charts.CRDs(charts.ExtensionBackup)
	if err != nil {
		return "", err
	}
	for _, crd := range crds {
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := apply(ctx, env.Client, crd); err != nil {
			return "", fmt.Errorf("applying CRD %s: %w", crd.Name, err)
		}
	}
	bundle, err := webhookcert.Generate(webhookcert.DNSNames(ExtensionName, GardenNamespace), nil, time.Now(), webhookcert.DefaultValidity)
	if err != nil {
		return "", err
	}
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: ExtensionWebhookSecretName, Namespace: GardenNamespace},
		Type:       corev1.SecretTypeTLS, Data: bundle.Data(),
	}
	if err := apply(ctx, env.Client, secret); err != nil {
		return "", fmt.Errorf("writing secret %s: %w", secret.Name, err)
	}
	values := map[string]any{
		"image":         extensionImageValues(env.Seed.Images()["gardener-extension-backup"]),
		"providerTypes": []any{"s3"},
		"webhooks":      map[string]any{"enabled": true, "caBundle": string(bundle.CACert), "secretName": ExtensionWebhookSecretName},
	}
	objects, err := chartrender.RenderEmbedded(charts.ExtensionBackup, chartrender.Release{Name: ExtensionName, Namespace: GardenNamespace}, values)
	if err != nil {
		return "", err
	}
	for _, obj := range objects {
		if err := apply(ctx, env.Client, obj); err != nil {
			return "", fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	if err := waitCRDsEstablished(ctx, env, crds); err != nil {
		return "", err
	}
	if err := WaitDeploymentAvailable(ctx, env, GardenNamespace, ExtensionName); err != nil {
		return "", err
	}
	return podSummary(ctx, env, GardenNamespace, "app.kubernetes.io/name="+ExtensionName)
}

// apply server-side applies obj as the demo.
func apply(ctx context.Context, c client.Client, obj runtime.Object) error {
	return druid.Apply(ctx, c, obj, fieldOwner)
}

func waitCRDsEstablished(ctx context.Context, env *Env, crds []*apiextensionsv1.CustomResourceDefinition) error {
	return poll(ctx, env, "CRDs established", func(ctx context.Context) (string, error) {
		for _, want := range crds {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: want.Name}, crd); err != nil {
				return "", err
			}
			established := false
			for _, c := range crd.Status.Conditions {
				established = established || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
			}
			if !established {
				return fmt.Sprintf("CRD %s is not established", crd.Name), nil
			}
		}
		return "", nil
	})
}

// WaitDeploymentAvailable waits until every replica of the Deployment is updated and available.
func WaitDeploymentAvailable(ctx context.Context, env *Env, namespace, name string) error {
	return poll(ctx, env, "deployment "+namespace+"/"+name+" available", func(ctx context.Context) (string, error) {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return "", err
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas < want || d.Status.AvailableReplicas < want {
			return fmt.Sprintf("%d of %d replicas updated, %d available", d.Status.UpdatedReplicas, want, d.Status.AvailableReplicas), nil
		}
		return "", nil
	})
}

// extensionImageValues are the chart's image values for ref (repository[:tag][@digest], as pushed to the
// seed's registry); an empty ref keeps the chart's.
func extensionImageValues(ref string) map[string]any {
	values := map[string]any{}
	if ref == "" {
		return values
	}
	repository, tag, digest := imageref.Split(ref)
	values["repository"] = repository
	if tag != "" {
		values["tag"] = tag
	}
	if digest != "" {
		values["digest"] = digest
	}
	return values
}
