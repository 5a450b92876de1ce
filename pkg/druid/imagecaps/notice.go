package imagecaps

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// noticed holds the keys NoticeOnce logged for.
var noticed sync.Map

// NoticeOnce logs msg at info level the first time this process sees key (e.g. an Etcd, an image and
// what its rendering leaves out), so that a behaviour an upstream image lacks is said once rather than on
// every reconcile. It reports whether it logged.
func NoticeOnce(ctx context.Context, key, msg string, keysAndValues ...any) bool {
	if _, seen := noticed.LoadOrStore(key, struct{}{}); seen {
		return false
	}
	log.FromContext(ctx).Info(msg, keysAndValues...)
	return true
}
