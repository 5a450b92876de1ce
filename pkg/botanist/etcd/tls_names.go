package etcd

import (
	"net"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Names and data keys of the TLS secrets the project's generator writes for the etcds of one control-plane
// namespace (GeneratedTLS). They are the names Gardener used before its secrets manager, which now adds a
// hash (package gardenersecrets references those). Kube-apiservers and Etcd resources set up with the
// generator address these secrets by name and key, so they must not change.
const (
	// CASecretName is the CA that signs the etcd server and client certificates (CN "etcd").
	CASecretName = "ca-etcd"
	// PeerCASecretName is the CA that signs the peer certificates of multi-member clusters (CN "etcd-peer").
	PeerCASecretName = "ca-etcd-peer"
	// ClientSecretName is the client certificate shared by kube-apiserver and monitoring (CN "etcd-client").
	ClientSecretName = "etcd-client"

	// DataKeyCACertificate holds the CA certificate that currently signs leaf certificates.
	DataKeyCACertificate = "ca.crt"
	// DataKeyCAPrivateKey holds the private key of the signing CA.
	DataKeyCAPrivateKey = "ca.key"
	// DataKeyCABundle holds every CA certificate peers must trust; during a CA rotation it carries the old and
	// the new CA, which is why Etcd resources reference this key rather than ca.crt.
	DataKeyCABundle = "bundle.crt"
	// DataKeyCertificate holds a leaf certificate (PEM).
	DataKeyCertificate = "tls.crt"
	// DataKeyPrivateKey holds the private key of a leaf certificate (PEM).
	DataKeyPrivateKey = "tls.key"

	// dataKeyNextCACertificate and dataKeyNextCAPrivateKey hold the new CA while a rotation makes peers trust
	// it before anything is signed with it.
	dataKeyNextCACertificate = "next-ca.crt"
	dataKeyNextCAPrivateKey  = "next-ca.key"

	caCommonName         = "etcd"
	peerCACommonName     = "etcd-peer"
	serverCommonName     = "etcd-server"
	clientCommonName     = "etcd-client"
	peerServerCommonName = "etcd-peer-server"
)

// ServerSecretName is the server certificate secret of the etcd with the given role (main, events).
func ServerSecretName(role string) string { return "etcd-server-" + role }

// PeerServerSecretName is the peer certificate secret of the etcd with the given role; it exists only when
// the etcd is highly available.
func PeerServerSecretName(role string) string { return "etcd-peer-server-" + role }

// ServerDNSNames are the DNS SANs of the server certificate: the local name, the client service in every form
// a pod may resolve it, and the members' peer names (the server certificate is also presented on the
// members' own FQDNs).
func ServerDNSNames(role, namespace string) []string {
	client := "etcd-" + role + "-client"
	names := []string{
		etcdpod.LocalHostName("etcd-" + role),
		client,
		client + "." + namespace,
		client + "." + namespace + ".svc",
		client + "." + namespace + ".svc.cluster.local",
	}
	return append(names, PeerDNSNames(role, namespace)...)
}

// PeerDNSNames are the wildcard names of the members behind the headless peer service; the peer certificate
// carries exactly these.
func PeerDNSNames(role, namespace string) []string {
	peer := "*.etcd-" + role + "-peer"
	return []string{
		peer,
		peer + "." + namespace,
		peer + "." + namespace + ".svc",
		peer + "." + namespace + ".svc.cluster.local",
	}
}

// ServerIPAddresses are the loopback addresses the sidecar and the wrapper use to reach etcd in the same pod.
func ServerIPAddresses() []net.IP {
	return []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
}
