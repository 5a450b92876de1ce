package seedworkflow

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// RestoreEtcds deploys the Etcds in the restore phase of a control-plane migration and waits for them. A
// highly available shoot's etcds are not created with three members on the new seed: three empty members
// would each restore the copied backups on their own and then have to agree on one cluster. As gardenlet
// does (isRestorationOfMultiNodeMainEtcdRequired, then ScaleUpETCD once kube-apiserver is up), one member
// restores the data, and the scale-up adds the others, which join it with peer TLS. This flow has no
// kube-apiserver, so the scale-up follows as soon as the single member is ready.
func RestoreEtcds(ctx context.Context, env *Env) (string, error) {
	scaleUp, err := DeployEtcdsForRestore(ctx, env)
	if err != nil {
		return "", err
	}
	if !scaleUp {
		return waitEtcds(ctx, env, env.members())
	}
	if _, err := waitEtcds(ctx, env, 1); err != nil {
		return "", err
	}
	if err := ScaleUpEtcds(ctx, env); err != nil {
		return "", err
	}
	return waitEtcds(ctx, env, env.members())
}

// DeployEtcdsForRestore deploys both Etcds for the restore phase without waiting: with one member when a
// multi-member restore is not finished yet (it then returns true: ScaleUpEtcds is due once they are ready),
// as DeployEtcds otherwise.
func DeployEtcdsForRestore(ctx context.Context, env *Env) (bool, error) {
	required, err := multiNodeRestoreRequired(ctx, env)
	if err != nil {
		return false, err
	}
	var replicas *int32
	if required {
		replicas = ptr.To[int32](1)
	}
	return required, deployEtcds(ctx, env, replicas)
}

// multiNodeRestoreRequired is gardenlet's rule: a highly available shoot's restore still has to go through
// one member while etcd-main does not exist or has not reached its full member count. An etcd-main at 0
// members was restored and scaled up before and then hibernated; it is not restored again.
func multiNodeRestoreRequired(ctx context.Context, env *Env) (bool, error) {
	if !env.HighAvailability {
		return false, nil
	}
	main, err := Component(env, etcd.RoleMain).Get(ctx)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return main.Spec.Replicas != 0 && main.Spec.Replicas != env.members(), nil
}

// ScaleUpEtcds scales both Etcds to their full member count (gardenlet's ScaleUpETCD); botanist's Scale
// enables peer TLS on the way. It does not wait: RestoreEtcds, or the caller, waits.
func ScaleUpEtcds(ctx context.Context, env *Env) error {
	for _, role := range etcdRoles {
		if err := Component(env, role).Scale(ctx, env.members()); err != nil {
			return fmt.Errorf("scaling up %s: %w", etcd.Name(role), err)
		}
	}
	return nil
}
