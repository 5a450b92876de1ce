package imagebuild

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// NonRootUID is the user and group every image runs as (distroless' "nonroot").
const NonRootUID = 65532

// Paths inside every image.
const (
	// CACertificatesPath is where Go's crypto/x509 (and most other TLS stacks on Linux) look first.
	CACertificatesPath = "/etc/ssl/certs/ca-certificates.crt"
	// HomeDir is the non-root user's home; the etcd pod mounts volumes below it, but the directory must exist
	// for containers with a read-only root filesystem and no volume there.
	HomeDir = "/home/nonroot"
)

// caBundlePEM is the NSS trust store of the pinned golang.org/x/crypto/x509roots/fallback module as PEM.
// Roots that carry a constraint (a distrust-after date) are left out: a PEM file cannot express the
// constraint, and trusting them without it would trust more than NSS does.
func caBundlePEM() []byte {
	var out bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}) // writes to memory
	}
	return out.Bytes()
}

// rootfsEntries is the file system every image shares below its binary: the same bytes in every image,
// so registries and nodes store the layer once.
func rootfsEntries() []entry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", NonRootUID, NonRootUID, HomeDir)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootUID)
	return []entry{
		{path: "etc/", mode: 0o755},
		{path: "etc/group", mode: 0o644, data: []byte(group)},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "etc/ssl/", mode: 0o755},
		{path: "etc/ssl/certs/", mode: 0o755},
		{path: CACertificatesPath[1:], mode: 0o644, data: caBundlePEM()},
		{path: "home/", mode: 0o755},
		{path: HomeDir[1:] + "/", mode: 0o700, uid: NonRootUID},
		{path: "tmp/", mode: 0o1777},
	}
}

// binaryEntries is the layer of one image's own binary, at file (its path in the image without the
// leading slash).
func binaryEntries(file string, binary []byte) []entry {
	return []entry{{path: file, mode: 0o755, data: binary}}
}

// epoch is the time every entry and the image config carry when none is given.
var epoch = time.Unix(0, 0).UTC()
