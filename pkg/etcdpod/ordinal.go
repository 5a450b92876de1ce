package etcdpod

import (
	"strconv"
	"strings"
)

// OrdinalAfter parses name as base followed by a StatefulSet ordinal, and false when name is no such name.
// The ordinal must be in the form the StatefulSet controller writes it into pod and claim names (decimal,
// no sign, no leading zeros), so that "etcd-main-01" or "etcd-main-+1" is never taken for member 1. Member,
// lease, pod and volume names all end in it; one parser keeps druid, the sidecar and the healing steps
// agreeing on which names belong to a member.
func OrdinalAfter(name, base string) (int, bool) {
	suffix, ok := strings.CutPrefix(name, base)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(suffix)
	if err != nil || i < 0 || strconv.Itoa(i) != suffix {
		return 0, false
	}
	return i, true
}

// TrailingOrdinal is the ordinal after the last '-' of name (OrdinalAfter with everything up to that dash
// as the base), and false for a name without a dash; for callers that know a member's name but not its
// Etcd's name or member name prefix.
func TrailingOrdinal(name string) (int, bool) {
	dash := strings.LastIndexByte(name, '-')
	if dash < 0 {
		return 0, false
	}
	return OrdinalAfter(name, name[:dash+1])
}
