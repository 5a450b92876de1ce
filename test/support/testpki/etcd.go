package testpki

import "go.etcd.io/etcd/client/pkg/v3/transport"

// TLSInfo is etcd's TLS configuration for a pair issued by this CA, requiring client certificates from
// the same CA: what peer-transport-security or client-transport-security hold in a pod.
func (ca *CA) TLSInfo(p Pair) transport.TLSInfo {
	return transport.TLSInfo{CertFile: p.CertFile, KeyFile: p.KeyFile, TrustedCAFile: ca.CertFile, ClientCertAuth: true}
}
