package localseed

import (
	"context"
	"net/netip"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/gardenerpolicies"
)

// networkPolicyAgentUser is the identity of every node's NetworkPolicy agent (Options.NetworkPolicies).
const networkPolicyAgentUser = "localseed:kube-network-policies"

// grantNetworkPolicyAgent lets the agents read what they judge packets by: pods (their addresses and
// labels), namespaces (their labels) and NetworkPolicies. Nothing else, and nothing to write.
func grantNetworkPolicyAgent(ctx context.Context, c kubernetes.Interface) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: networkPolicyAgentUser},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"list", "watch"}},
		},
	}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: networkPolicyAgentUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: networkPolicyAgentUser},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: networkPolicyAgentUser}},
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// startGardenerPolicies runs Gardener's NetworkPolicy controllers (gardenlet's and the resource manager's)
// until Stop, so that the garden, shoot and extension namespaces get the policies of a Gardener seed.
func (s *Seed) startGardenerPolicies(podRange netip.Prefix) error {
	log := s.opts.Log.WithValues("seed", s.prefix).WithName("gardener-networkpolicies")
	done, err := gardenerpolicies.Start(s.runCtx, s.RESTConfig(), gardenerpolicies.Networks{Pods: podRange.String(), Services: serviceCIDR}, log)
	if err != nil {
		return err
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); <-done }()
	return nil
}
