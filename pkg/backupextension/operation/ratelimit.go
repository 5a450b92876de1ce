package operation

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Retry delays of failed operations. Extension operations talk to object stores; when one fails (bad
// credentials, an unreachable endpoint) retrying within milliseconds only multiplies the failed calls, the
// warning events and the status writes. A second first, doubling up to five minutes, reacts quickly to a
// fixed secret and stays quiet on a lasting outage.
const (
	RetryBaseDelay = time.Second
	RetryMaxDelay  = 5 * time.Minute
)

// RateLimiter is the work-queue rate limiter of the extension controllers.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](RetryBaseDelay, RetryMaxDelay)
}
