package app

import (
	"context"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

// memberFlags adds the flags of the commands that talk to an Etcd's members, and returns where they land.
func memberFlags(cmd *cobra.Command) *etcdops.MemberAccessOptions {
	o := &etcdops.MemberAccessOptions{}
	f := cmd.Flags()
	f.StringSliceVar(&o.Endpoints, "endpoints", nil, "client URLs of the members (default: the Etcd's client Service, https://<name>-client.<namespace>.svc:<clientPort>)")
	f.StringVar(&o.CAFile, "cacert", "", "CA bundle (PEM) the members' serving certificate is checked against (default: the secret of spec.etcd.clientUrlTls.tlsCASecretRef)")
	f.StringVar(&o.CertFile, "cert", "", "client certificate (PEM) (default: tls.crt of spec.etcd.clientUrlTls.clientTLSSecretRef)")
	f.StringVar(&o.KeyFile, "key", "", "client key (PEM) (default: tls.key of spec.etcd.clientUrlTls.clientTLSSecretRef)")
	f.StringVar(&o.ServerName, "tls-server-name", "", "name the serving certificate must hold (default: <name>-client.<namespace>.svc)")
	return o
}

// connectMembers reads the Etcd of args[0] through the kube-apiserver and opens an etcd client to its
// members; the caller closes the client.
func (o *etcdOptions) connectMembers(ctx context.Context, args []string, opts *etcdops.MemberAccessOptions) (*clientv3.Client, etcdops.MemberAccess, error) {
	c, key, err := o.etcdKey(args)
	if err != nil {
		return nil, etcdops.MemberAccess{}, err
	}
	etcd, err := etcdops.GetEtcd(ctx, c, key)
	if err != nil {
		return nil, etcdops.MemberAccess{}, err
	}
	access, err := etcdops.ResolveMemberAccess(ctx, c, etcd, *opts)
	if err != nil {
		return nil, etcdops.MemberAccess{}, err
	}
	cli, err := access.Connect()
	return cli, access, err
}
