package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	"github.com/gardener-etcd/gardener-etcd/pkg/podaccess"
)

// TriggerLimit bounds how often callers without credentials (podaccess.Authenticated is false) may trigger
// one kind of snapshot: a token bucket of Burst tokens, one token back per Every. Full snapshots, final
// full snapshots and delta snapshots have a bucket each. Callers in the pod and clients of the
// backup-restore CA are not limited: a burst from outside cannot starve druid's own requests.
//
// Why a limit at all: every full snapshot is a copy of the database in the store, and with LimitBased
// garbage collection each one pushes the oldest kept full snapshot out; a caller that may trigger without
// end could empty the backup history or run up the store's bill.
type TriggerLimit struct {
	// Burst is how many triggers are served back to back.
	Burst int
	// Every is how long one more trigger takes to become available.
	Every time.Duration
}

// DefaultTriggerLimit lets the callers Gardener has — gardenlet's final snapshot before a control-plane
// migration or after an encryption-key rotation, upstream druid's pre-hibernation snapshot, compaction
// trigger and EtcdOpsTasks — through back to back, and one more every five minutes after that.
var DefaultTriggerLimit = TriggerLimit{Burst: 3, Every: 5 * time.Minute}

// rateLimited serves h to authenticated callers always and to others while the request's bucket
// (limiterOf) has a token; otherwise it answers 429 Too Many Requests with Retry-After (whole seconds until
// a token is back) and h does not run.
func rateLimited(limiterOf func(*http.Request) *rate.Limiter, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if podaccess.Authenticated(r) {
			h.ServeHTTP(w, r)
			return
		}
		res := limiterOf(r).Reserve()
		if delay := res.Delay(); delay > 0 {
			res.Cancel()
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(delay.Seconds()))))
			http.Error(w, fmt.Sprintf("%s %s: too many snapshot requests without a client certificate; retry in %s",
				r.Method, r.URL.Path, delay.Round(time.Second)), http.StatusTooManyRequests)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// newTriggerLimiters gives each kind of trigger a token bucket of l, full at start, and returns which
// bucket a request draws from. Final full snapshots have their own: a caller that spends the budget of
// the ordinary full snapshots must not hold up gardenlet's final snapshot before a control-plane
// migration (a request whose final parameter does not parse draws from the ordinary bucket and is then
// refused by the handler).
func newTriggerLimiters(l TriggerLimit) func(*http.Request) *rate.Limiter {
	full, final, delta := rate.NewLimiter(rate.Every(l.Every), l.Burst), rate.NewLimiter(rate.Every(l.Every), l.Burst),
		rate.NewLimiter(rate.Every(l.Every), l.Burst)
	return func(r *http.Request) *rate.Limiter {
		if r.URL.Path == "/snapshot/delta" {
			return delta
		}
		if isFinal, err := parseFinal(r.URL.Query().Get("final")); err == nil && isFinal {
			return final
		}
		return full
	}
}
