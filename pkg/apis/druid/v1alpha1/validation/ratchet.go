package validation

import (
	"reflect"
	"strconv"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Ratchet drops the errors of an update whose field kept its value: the object stored before (oldObj)
// already held it, so a rule added or tightened since then is no reason to refuse an unrelated change
// (Etcds written for upstream etcd-druid must stay updatable). An error whose field was
// added, removed or changed is kept, i.e. a changed field is judged as on create; a field missing in
// both objects is judged by the closest field above it that either has (unchangedAt). An error whose
// path does not fit an object's shape is kept.
//
// A rule that relates two fields reports on one of them; when only the other one changed, the error is
// dropped here unless the pair is listed in couplings (a store's container and prefix are judged by its
// provider). The CRD's CEL rules check the other pairs again on every write of the enclosing object.
//
// A rule whose violation has a measure (how far a quota exceeds the volume, how often a spread
// constraint is repeated) is also judged as a whole, by its entry in judges (by the error's origin): its error is dropped when
// the update does not make the violation worse, so a stored violation can be repaired step by step and
// does not look new when unrelated list items move. When it is worse, the errors on the fields that
// changed are kept (by the path rule above).
func Ratchet(errs field.ErrorList, newObj, oldObj any) field.ErrorList {
	if len(errs) == 0 || oldObj == nil {
		return errs
	}
	newMap, err1 := runtime.DefaultUnstructuredConverter.ToUnstructured(newObj)
	oldMap, err2 := runtime.DefaultUnstructuredConverter.ToUnstructured(oldObj)
	if err1 != nil || err2 != nil {
		return errs
	}
	var kept field.ErrorList
	for _, e := range errs {
		if judge, found := judges[e.Origin]; found && e.Origin != "" {
			if worse, applies := judge(e, newObj, oldObj); applies && !worse {
				continue
			}
		}
		segments, ok := splitPath(e.Field)
		if !ok || !unchangedAt(newMap, oldMap, segments) || coupledChanged(newMap, oldMap, segments) {
			kept = append(kept, e)
		}
	}
	return kept
}

// judge decides whether an update made the violation an error reports worse; applies is false when it
// cannot judge the objects (another kind), and the error is then ratcheted by its path alone.
type judge func(e *field.Error, newObj, oldObj any) (worse, applies bool)

// The origins (field.Error.Origin) of the errors of the rules judged as a whole: other rules report on the
// same fields, so the rule is told by its origin, not by its path.
const (
	originQuotaFitsVolume          = "quotaFitsVolume"
	originDistinctSpreadConstraint = "distinctSpreadConstraints"
)

// judges are the rules judged as a whole on update, by the origin of their errors.
var judges = map[string]judge{
	originQuotaFitsVolume:          quotaExcessGrew,
	originDistinctSpreadConstraint: spreadDuplicatesGrew,
}

// unchangedAt tells whether both objects hold the same at the path, judged at its deepest point that
// either object has: a field missing in both (a required name, omitted when empty) counts as unchanged
// only when the field above it is the same too — an update that adds a TLS block with empty secret
// references must be judged, though neither object has the names. A path that does not fit an object's
// shape counts as changed.
func unchangedAt(newMap, oldMap any, segments []segment) bool {
	for n := len(segments); n > 0; n-- {
		newValue, newFound, ok1 := lookup(newMap, segments[:n])
		oldValue, oldFound, ok2 := lookup(oldMap, segments[:n])
		if !ok1 || !ok2 {
			return false
		}
		if newFound || oldFound {
			return newFound == oldFound && apiequality.Semantic.DeepEqual(newValue, oldValue)
		}
	}
	return true
}

// segment is one step of a field path: a field name, a map key or a list index.
type segment struct {
	name  string
	index bool
}

// splitPath parses field.Path.String() ("spec.backup.store.provider", "spec.x[0].y", "spec.labels[a.b/c]").
func splitPath(path string) ([]segment, bool) {
	var segments []segment
	for len(path) > 0 {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return nil, false
			}
			segments = append(segments, segment{name: path[1:end], index: true})
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			segments = append(segments, segment{name: path[:end]})
			path = path[end:]
		}
	}
	return segments, len(segments) > 0
}

// lookup walks segments through an unstructured object. found is false when the path ends early (a
// missing field, key or index); ok is false when the path does not fit the object's shape.
func lookup(obj any, segments []segment) (value any, found, ok bool) {
	value = obj
	for _, s := range segments {
		switch v := value.(type) {
		case map[string]any:
			next, present := v[s.name]
			if !present {
				return nil, false, true
			}
			value = next
		case []any:
			if !s.index {
				return nil, false, false
			}
			i, err := strconv.Atoi(s.name)
			if err != nil {
				return nil, false, false
			}
			if i < 0 || i >= len(v) {
				return nil, false, true
			}
			value = v[i]
		case nil:
			return nil, false, true
		default:
			return nil, false, false
		}
	}
	return value, true, true
}

// coupling names the sibling field whose change makes a rule judge its field again, and when a change
// counts.
type coupling struct {
	sibling string
	changed func(newValue, oldValue any) bool
}

// couplings are the fields (by name) whose rules depend on a sibling. A store's container is one path
// segment only for the Local provider: a container kept from an S3 store (where "../x" is a bucket name)
// must be judged when the store becomes Local, or the update would mount another node directory. The
// same holds for a prefix with a ".." segment (kept from before the prefix rule): below a Local store's
// mount it leads into another node directory. A store with another provider is a new location, so any
// change of provider judges both again. The delta snapshot period must stay below the garbage collection
// period (reported on deltaSnapshotPeriod, as upstream's CRD does): a shorter garbage-collection period alone
// would remove deltas before a full snapshot covers them, so its change judges the rule too.
var couplings = map[string]coupling{
	"container":           {sibling: "provider", changed: canonicalProviderChanged},
	"prefix":              {sibling: "provider", changed: canonicalProviderChanged},
	"deltaSnapshotPeriod": {sibling: "garbageCollectionPeriod", changed: valueChanged},
}

// valueChanged compares two values as they are.
func valueChanged(newValue, oldValue any) bool { return !reflect.DeepEqual(newValue, oldValue) }

// coupledChanged tells whether the sibling an error's field is coupled to changed.
func coupledChanged(newMap, oldMap any, segments []segment) bool {
	last := segments[len(segments)-1]
	c, ok := couplings[last.name]
	if !ok || last.index {
		return false
	}
	sibling := append(append([]segment{}, segments[:len(segments)-1]...), segment{name: c.sibling})
	newValue, _, ok1 := lookup(newMap, sibling)
	oldValue, _, ok2 := lookup(oldMap, sibling)
	return ok1 && ok2 && c.changed(newValue, oldValue)
}

// canonicalProviderChanged compares two provider values by their canonical names (an alias is no change).
func canonicalProviderChanged(newValue, oldValue any) bool {
	canonical := func(v any) any {
		if s, ok := v.(string); ok {
			if c, known := druidv1alpha1.CanonicalStorageProvider(druidv1alpha1.StorageProvider(s)); known {
				return string(c)
			}
		}
		return v
	}
	return !apiequality.Semantic.DeepEqual(canonical(newValue), canonical(oldValue))
}
