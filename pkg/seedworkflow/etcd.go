package seedworkflow

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// Ports of an etcd member pod.
const (
	clientPort = 2379
	backupPort = 8080
)

// Component is the botanist etcd component of role in the shoot namespace; main is backed up to the shoot's
// BackupEntry. With env.HighAvailability both run three members with peer TLS, as gardenlet's etcds of a
// shoot with a highly available control plane.
func Component(env *Env, role string) etcd.Interface { return component(env, role, nil) }

// component is Component with Values.Replicas: nil leaves the member count to botanist.
func component(env *Env, role string, replicas *int32) etcd.Interface {
	values := etcd.Values{Role: role, WaitTimeout: env.Timeout, WaitInterval: env.Interval, DeltaSnapshotPeriod: env.DeltaSnapshotPeriod,
		HighAvailability: env.HighAvailability, Replicas: replicas}
	if role == etcd.RoleMain && env.BackupEntryName != "" {
		values.BackupConfig = &etcd.BackupConfig{BackupEntryName: env.BackupEntryName}
	}
	if role == etcd.RoleMain {
		values.SnapshotTransport = etcd.SnapshotTransport{
			BaseURL:     fmt.Sprintf("https://%s-client.%s:%d", etcd.Name(role), env.Namespace, backupPort),
			DialContext: env.dialMember(role),
		}
	}
	return etcd.New(env.Client, env.Namespace, values)
}

// etcdRoles are the shoot's two etcds, in the order the flows handle them.
var etcdRoles = []string{etcd.RoleMain, etcd.RoleEvents}

// DeployEtcds deploys etcd-main (backed up) and etcd-events through botanist, as the shoot flow does: Deploy
// is retried while a secret it needs is missing, then both are waited for (one member each, three with
// env.HighAvailability).
func DeployEtcds(ctx context.Context, env *Env) (string, error) {
	if err := deployEtcds(ctx, env, nil); err != nil {
		return "", err
	}
	return waitEtcds(ctx, env, env.members())
}

// deployEtcds deploys both Etcds, with replicas when not nil (the components' choice otherwise), retrying
// while a secret is missing.
func deployEtcds(ctx context.Context, env *Env, replicas *int32) error {
	for _, role := range etcdRoles {
		if err := deployRetrying(ctx, env, component(env, role, replicas)); err != nil {
			return fmt.Errorf("deploying %s: %w", etcd.Name(role), err)
		}
	}
	return nil
}

// waitEtcds waits until botanist reports both Etcds ready and druid reports members ready members each
// (peer TLS on every one when there are several).
func waitEtcds(ctx context.Context, env *Env, members int32) (string, error) {
	for _, role := range etcdRoles {
		if err := Component(env, role).Wait(ctx); err != nil {
			return "", err
		}
		if err := WaitMembers(ctx, env, role, int(members), members > 1); err != nil {
			return "", err
		}
	}
	return EtcdLine(ctx, env, etcd.RoleMain) + "; " + EtcdLine(ctx, env, etcd.RoleEvents), nil
}

// deployRetrying retries Deploy while it reports a missing secret (retriable), up to env.Timeout.
func deployRetrying(ctx context.Context, env *Env, component etcd.Interface) error {
	deadline := time.Now().Add(env.Timeout)
	for {
		err := component.Deploy(ctx)
		var missing *etcd.MissingSecretError
		if !errors.As(err, &missing) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(context.Cause(ctx), err)
		case <-time.After(env.Interval):
		}
	}
}

// ScaleMain scales etcd-main to replicas (peer TLS is enabled on the way from one member) and waits until
// druid reports every member ready.
func ScaleMain(ctx context.Context, env *Env, replicas int32) (string, error) {
	component := Component(env, etcd.RoleMain)
	if err := component.Scale(ctx, replicas); err != nil {
		return "", err
	}
	if err := component.Wait(ctx); err != nil {
		return "", err
	}
	if err := WaitMembers(ctx, env, etcd.RoleMain, int(replicas), replicas > 1); err != nil {
		return "", err
	}
	return EtcdLine(ctx, env, etcd.RoleMain), nil
}

// WaitMembers waits until druid reports n members, each Ready with an ID, AllMembersReady=True and, with
// peerTLS, every peer URL on https. Botanist's Wait is Gardener's notion of ready (the StatefulSet is ready
// and runs the current spec), which a new member's first lease renewal may still trail.
func WaitMembers(ctx context.Context, env *Env, role string, n int, peerTLS bool) error {
	return poll(ctx, env, fmt.Sprintf("%d ready members of %s", n, etcd.Name(role)), func(ctx context.Context) (string, error) {
		obj, err := Component(env, role).Get(ctx)
		if err != nil {
			return "", err
		}
		ready := 0
		for _, m := range obj.Status.Members {
			if m.Status == druidv1alpha1.EtcdMemberStatusReady && m.ID != nil {
				ready++
			}
		}
		switch {
		case ready != n || len(obj.Status.Members) != n:
			return fmt.Sprintf("%d of %d members ready (%d in status)", ready, n, len(obj.Status.Members)), nil
		case !conditionTrue(obj, druidv1alpha1.ConditionTypeAllMembersReady):
			return "condition AllMembersReady is not True", nil
		case peerTLS && (obj.Status.PeerUrlTLSEnabled == nil || !*obj.Status.PeerUrlTLSEnabled):
			return "peer TLS not enabled on every member yet", nil
		}
		return "", nil
	})
}

func conditionTrue(obj *druidv1alpha1.Etcd, t druidv1alpha1.ConditionType) bool {
	for _, c := range obj.Status.Conditions {
		if c.Type == t {
			return c.Status == druidv1alpha1.ConditionTrue
		}
	}
	return false
}

// Snapshot asks etcd-main's sidecar for a final full snapshot (botanist Snapshot, over TLS with the
// etcd-client certificate) and describes the snapshot it took.
func Snapshot(ctx context.Context, env *Env) (string, error) {
	answer, err := Component(env, etcd.RoleMain).Snapshot(ctx)
	if err != nil {
		return "", err
	}
	var snap struct {
		Kind         string `json:"kind"`
		LastRevision int64  `json:"lastRevision"`
		SnapName     string `json:"snapName"`
		IsFinal      bool   `json:"isFinal"`
	}
	if err := json.Unmarshal([]byte(answer), &snap); err != nil {
		return "", fmt.Errorf("the sidecar answered %q: %w", strings.TrimSpace(answer), err)
	}
	if snap.Kind != "Full" || !snap.IsFinal {
		return "", fmt.Errorf("asked for a final full snapshot, got %s", strings.TrimSpace(answer))
	}
	if snap.LastRevision < env.WrittenRevision {
		return "", fmt.Errorf("the snapshot ends at revision %d, before the last write at %d", snap.LastRevision, env.WrittenRevision)
	}
	return fmt.Sprintf("%s up to revision %d", snap.SnapName, snap.LastRevision), nil
}

// EtcdLine is a one-line state of an Etcd: ready replicas, members and their roles.
func EtcdLine(ctx context.Context, env *Env, role string) string {
	obj, err := Component(env, role).Get(ctx)
	if err != nil {
		return fmt.Sprintf("%s: %v", etcd.Name(role), err)
	}
	line := fmt.Sprintf("%s %d/%d ready", obj.Name, obj.Status.ReadyReplicas, obj.Spec.Replicas)
	for _, m := range obj.Status.Members {
		line += fmt.Sprintf(", %s %s", m.Name, m.Status)
		if m.Role != nil {
			line += " " + string(*m.Role)
		}
	}
	return line
}

// MemberIPs are the pod IPs of the Etcd's members that have one, by pod name.
func MemberIPs(ctx context.Context, env *Env, role string) (map[string]string, error) {
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(env.Namespace), memberSelector(role)); err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", etcd.Name(role), err)
	}
	ips := map[string]string{}
	for _, p := range pods.Items {
		if p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			ips[p.Name] = p.Status.PodIP
		}
	}
	return ips, nil
}

// memberSelector selects the member pods of role's Etcd (druid's managed labels).
func memberSelector(role string) client.MatchingLabels {
	return client.MatchingLabels{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: etcd.Name(role)}
}

// dialMember dials a member pod of role directly, whatever address was asked for: the pods are on the
// host's bridge, the cluster's service DNS is not. TLS still verifies the requested host name.
func (env *Env) dialMember(role string) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		ips, err := MemberIPs(ctx, env, role)
		if err != nil {
			return nil, err
		}
		var errs []error
		var d net.Dialer
		for _, ip := range ips {
			conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip, port))
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		return nil, fmt.Errorf("no member of %s reachable on port %s: %w", etcd.Name(role), port, errors.Join(errs...))
	}
}

// EtcdClient is an etcd client of role's members, reached at their pod IPs over TLS with the client
// certificate the Etcd names; the server certificate is verified for the client service's name.
func EtcdClient(ctx context.Context, env *Env, role string) (*clientv3.Client, error) {
	ips, err := MemberIPs(ctx, env, role)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("no member of %s has a pod IP", etcd.Name(role))
	}
	endpoints := make([]string, 0, len(ips))
	for _, ip := range ips {
		endpoints = append(endpoints, "https://"+net.JoinHostPort(ip, strconv.Itoa(clientPort)))
	}
	return EtcdClientFor(ctx, env, role, endpoints...)
}

// EtcdClientFor is EtcdClient for the given endpoints (https://<pod IP>:2379). The CA bundle and the client
// certificate are the secrets the Etcd's spec.etcd.clientUrlTLS names: botanist's fixed names, or the
// hashed names of Gardener's secrets manager.
func EtcdClientFor(ctx context.Context, env *Env, role string, endpoints ...string) (*clientv3.Client, error) {
	obj := &druidv1alpha1.Etcd{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, obj); err != nil {
		return nil, fmt.Errorf("reading Etcd %s: %w", etcd.Name(role), err)
	}
	tlsConfig := obj.Spec.Etcd.ClientUrlTLS
	if tlsConfig == nil {
		return nil, fmt.Errorf("the Etcd %s serves clients without TLS", obj.Name)
	}
	caKey := ptr.Deref(tlsConfig.TLSCASecretRef.DataKey, etcd.DataKeyCABundle)
	secrets := map[string]*corev1.Secret{}
	for _, name := range []string{tlsConfig.TLSCASecretRef.Name, tlsConfig.ClientTLSSecretRef.Name} {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: name}, s); err != nil {
			return nil, fmt.Errorf("reading secret %s: %w", name, err)
		}
		secrets[name] = s
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secrets[tlsConfig.TLSCASecretRef.Name].Data[caKey]) {
		return nil, fmt.Errorf("secret %s has no CA certificate in %s", tlsConfig.TLSCASecretRef.Name, caKey)
	}
	clientSecret := secrets[tlsConfig.ClientTLSSecretRef.Name]
	cert, err := tls.X509KeyPair(clientSecret.Data[etcd.DataKeyCertificate], clientSecret.Data[etcd.DataKeyPrivateKey])
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", clientSecret.Name, err)
	}
	// gRPC verifies the server certificate for the connection's authority (not tls.Config.ServerName), which
	// would be the pod IP: name the client service instead, one of the certificate's SANs.
	serverName := fmt.Sprintf("%s-client.%s.svc", etcd.Name(role), env.Namespace)
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 10 * time.Second,
		// A member cut off the network leaves its connection hanging; keepalives let the client drop it and
		// use the other endpoints instead of timing out one request after another on it.
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		TLS:                  &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		DialOptions:          []grpc.DialOption{grpc.WithAuthority(serverName)},
		Logger:               zap.NewNop(),
	})
}

// DemoKeyPrefix is where WriteData writes.
const DemoKeyPrefix = "/demo/"

// WriteData writes n keys into role's etcd and reads them back with a linearizable range.
func WriteData(ctx context.Context, env *Env, role string, n int) (string, error) {
	cli, err := EtcdClient(ctx, env, role)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, env.Timeout)
	defer cancel()
	var last int64
	for i := range n {
		resp, err := cli.Put(ctx, fmt.Sprintf("%skey-%04d", DemoKeyPrefix, i), fmt.Sprintf("value %d written at %s", i, time.Now().UTC().Format(time.RFC3339)))
		if err != nil {
			return "", fmt.Errorf("put %d: %w", i, err)
		}
		last = resp.Header.Revision
	}
	count, err := CountKeys(ctx, cli)
	if err != nil {
		return "", err
	}
	if count < int64(n) {
		return "", fmt.Errorf("wrote %d keys, read back %d", n, count)
	}
	env.WrittenRevision = max(env.WrittenRevision, last)
	return fmt.Sprintf("%d keys under %s at %v, revision %d", count, DemoKeyPrefix, cli.Endpoints(), last), nil
}

// CountKeys counts the keys under DemoKeyPrefix (linearizable).
func CountKeys(ctx context.Context, cli *clientv3.Client) (int64, error) {
	resp, err := cli.Get(ctx, DemoKeyPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("counting keys: %w", err)
	}
	return resp.Count, nil
}
