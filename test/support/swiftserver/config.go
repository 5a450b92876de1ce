package swiftserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Credentials of the TempAuth user every server has; tests just need to agree.
const (
	// DefaultUser is the TempAuth user in "account:user" form.
	DefaultUser = "test:tester"
	// DefaultKey is its key (password).
	DefaultKey = "testing"
	// Account is the Swift account of DefaultUser (TempAuth's reseller prefix AUTH_ plus the account).
	Account = "AUTH_test"
	// hashPathSalt is the swift.conf hash path prefix and suffix.
	hashPathSalt = "gardener-etcd-test"
)

// backend is one of the storage servers and the ring it serves.
type backend struct {
	name string // account, container or object
	port int
}

// writeConfig writes swift.conf and one configuration per server into dir. Every server runs in one
// process (workers = 0) as the current user, logs to the console (the -v flag) at WARNING, and keeps its
// data below devices/ without checking for mount points.
func writeConfig(dir, devices, user string, proxyPort, memcachePort int, backends []backend) error {
	files := map[string]string{
		"swift.conf": fmt.Sprintf(`[swift-hash]
swift_hash_path_suffix = %[1]s
swift_hash_path_prefix = %[1]s

[storage-policy:0]
name = test
default = yes
`, hashPathSalt),
		"proxy-server.conf": fmt.Sprintf(`[DEFAULT]
bind_ip = 127.0.0.1
bind_port = %d
workers = 0
user = %s
swift_dir = %s
log_level = WARNING

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:tempauth]
use = egg:swift#tempauth
user_%s = %s .admin

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:%d

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:healthcheck]
use = egg:swift#healthcheck

[filter:proxy-logging]
use = egg:swift#proxy_logging

[filter:listing_formats]
use = egg:swift#listing_formats

[filter:copy]
use = egg:swift#copy

[filter:slo]
use = egg:swift#slo

[filter:dlo]
use = egg:swift#dlo
`, proxyPort, user, dir, strings.ReplaceAll(DefaultUser, ":", "_"), DefaultKey, memcachePort),
	}
	for _, b := range backends {
		files[b.name+"-server.conf"] = fmt.Sprintf(`[DEFAULT]
bind_ip = 127.0.0.1
bind_port = %d
workers = 0
user = %s
swift_dir = %s
devices = %s
mount_check = false
disable_fallocate = true
log_level = WARNING

[pipeline:main]
pipeline = %[5]s-server

[app:%[5]s-server]
use = egg:swift#%[5]s
`, b.port, user, dir, devices, b.name)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// ringScript builds the three rings (one partition, one replica, one device each) with Swift's own
// RingBuilder in one Python process: swift-ring-builder would need nine invocations (create, add,
// rebalance per ring), which took 28 s on a busy two-core machine.
const ringScript = `import sys
from swift.common.ring import RingBuilder
swift_dir = sys.argv[1]
for arg in sys.argv[2:]:
    name, port = arg.split("=")
    b = RingBuilder(0, 1, 0)
    b.add_dev({"id": 0, "region": 1, "zone": 1, "ip": "127.0.0.1", "port": int(port), "device": "d1", "weight": 1})
    b.rebalance()
    b.get_ring().save("%s/%s.ring.gz" % (swift_dir, name))
`
