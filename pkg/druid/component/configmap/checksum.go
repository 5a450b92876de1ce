package configmap

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
)

// Checksum is the sha256 (hex) of ConfigMap data, computed over the keys in sorted order with their values.
// The StatefulSet's pod template carries it as checksum/etcd-configmap, so a configuration change rolls the
// pods and an unchanged configuration never does.
func Checksum(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(data[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
