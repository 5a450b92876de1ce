package gardenlet

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DruidServiceAccount is the name of druid's service account in gardenlet's deployment.
const DruidServiceAccount = "etcd-druid"

// DruidIdentity creates druid's service account in namespace (which must exist), binds it to ClusterRole
// (created when absent) and returns a client configuration of admin's apiserver authenticated as that
// account by a token: druid then is system:serviceaccount:<namespace>:etcd-druid and may do exactly what
// gardenlet's role grants. admin must be allowed to create all of that.
func DruidIdentity(ctx context.Context, c client.Client, admin *rest.Config, namespace string) (*rest.Config, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DruidServiceAccount, Namespace: namespace}}
	if err := c.Create(ctx, sa); err != nil {
		return nil, fmt.Errorf("creating service account %s/%s: %w", namespace, sa.Name, err)
	}
	role := ClusterRole()
	if err := client.IgnoreAlreadyExists(c.Create(ctx, role)); err != nil {
		return nil, fmt.Errorf("creating cluster role %s: %w", role.Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name + ":" + namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
	}
	if err := c.Create(ctx, binding); err != nil {
		return nil, fmt.Errorf("creating cluster role binding %s: %w", binding.Name, err)
	}
	token := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	if err := c.SubResource("token").Create(ctx, sa, token); err != nil {
		return nil, fmt.Errorf("requesting a token of %s/%s: %w", namespace, sa.Name, err)
	}
	return &rest.Config{Host: admin.Host, BearerToken: token.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}, nil
}
