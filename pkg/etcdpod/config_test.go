package etcdpod

import (
	"reflect"
	"strings"
	"testing"
)

// TestKeysAreTheTemplatesJSONTags keeps the keys the sidecar resolves equal to the keys druid renders: a
// renamed field tag or key constant fails here instead of in a pod that cannot find its member entry.
func TestKeysAreTheTemplatesJSONTags(t *testing.T) {
	tags := map[string]bool{}
	typ := reflect.TypeOf(ConfigTemplate{})
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		tags[name] = true
	}
	for _, key := range []string{
		KeyName, KeyDataDir, KeyInitialCluster, KeyInitialClusterState, KeyInitialAdvertisePeerURLs,
		KeyAdvertiseClientURLs, KeyListenPeerURLs, KeyListenClientURLs, KeyClientTransportSecurity, KeyPeerTransportSecurity,
		KeyMemberNamePrefix,
	} {
		if !tags[key] {
			t.Errorf("key %q is no json tag of ConfigTemplate", key)
		}
	}
}
