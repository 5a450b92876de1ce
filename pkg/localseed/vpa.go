package localseed

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/vpa"
)

// InstallVPACRDs installs (or updates to this version) the VerticalPodAutoscaler API, which every Gardener
// seed has: the Gardener-side etcd component writes a VPA for each Etcd. The seed calls it at every start.
// Only the API: no recommender, updater or admission controller runs on the local seed, so the VPAs are
// stored and never acted on.
func InstallVPACRDs(ctx context.Context, cfg *rest.Config) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	crds, err := vpa.CRDs()
	if err != nil {
		return err
	}
	for _, crd := range crds {
		err := c.Create(ctx, crd)
		if apierrors.IsAlreadyExists(err) {
			existing := &apiextensionsv1.CustomResourceDefinition{}
			if err = c.Get(ctx, client.ObjectKeyFromObject(crd), existing); err == nil {
				crd.ResourceVersion = existing.ResourceVersion
				err = c.Update(ctx, crd)
			}
		}
		if err != nil {
			return fmt.Errorf("installing CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}
