package validation

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// MaxPrefixLength bounds a store's prefix. Object stores cap an object's name at 1024 bytes (S3, GCS,
// Swift; Azure at 1024 characters); the sidecar appends up to about 70 bytes (`/v2/Full-<rev>-<rev>-<unix
// seconds>.zlib.final`), and Gardener's prefixes (`<backupEntryName>/etcd-<role>`) stay below 150. 512
// leaves room on both sides; a 2,000-character prefix would be admitted and then fail every upload.
const MaxPrefixLength = 512

// validateStorePrefix refuses a prefix that leaves the store location it names: a leading `/` (an
// absolute path for the Local store, below which druid mounts the host directory), `.` or `..` segments
// (for the Local store a path into another directory of the node, for object stores a key that some
// stores normalise and others do not), control characters (which no store takes in a key and no
// container argument can carry), and more than MaxPrefixLength bytes. An empty prefix is refused by the
// Required check.
func validateStorePrefix(prefix string, fld *field.Path) field.ErrorList {
	if prefix == "" {
		return nil
	}
	invalid := func(msg string) field.ErrorList { return field.ErrorList{field.Invalid(fld, abbreviated(prefix), msg)} }
	if len(prefix) > MaxPrefixLength {
		return invalid(fmt.Sprintf("must be at most %d bytes long, is %d: object stores cap object names at 1024 bytes", MaxPrefixLength, len(prefix)))
	}
	if strings.IndexFunc(prefix, unicode.IsControl) >= 0 {
		return invalid("must not contain control characters")
	}
	if strings.HasPrefix(prefix, "/") {
		return invalid("must be relative: no leading '/' (e.g. <backupEntryName>/etcd-main)")
	}
	for _, segment := range strings.Split(prefix, "/") {
		if segment == "." || segment == ".." {
			return invalid(fmt.Sprintf("must not contain a %q path segment: it would point outside this cluster's location in the store", segment))
		}
	}
	return nil
}

// prefixWarnings names prefixes that are odd but harmless: the sidecar joins keys as paths, as the
// upstream sidecar does, so an empty segment (`a//b`, a trailing `/`) stores below the cleaned form,
// where a tool that takes the prefix as written does not look.
func prefixWarnings(prefix string, fld *field.Path) []string {
	if prefix == "" || strings.HasPrefix(prefix, "/") {
		return nil
	}
	if strings.Contains(prefix, "//") || strings.HasSuffix(prefix, "/") {
		return []string{fmt.Sprintf("%s: %q has an empty path segment ('//' or a trailing '/'); snapshots are stored below %q",
			fld, prefix, druidv1alpha1.CleanStorePrefix(prefix))}
	}
	return nil
}

// validateEndpointOverride refuses an endpoint the sidecar cannot dial: it must be an http or https URL
// with a host, and nothing the store client would misread (no user information, query or fragment).
func validateEndpointOverride(endpoint *string, fld *field.Path) field.ErrorList {
	if endpoint == nil || *endpoint == "" {
		return nil
	}
	u, err := url.Parse(*endpoint)
	shown, msg := "", ""
	if err == nil {
		shown = u.Redacted() // credentials in the URL are not repeated in the error
	}
	switch {
	case err != nil:
		msg = err.Error()
	case u.Scheme != "http" && u.Scheme != "https":
		msg = "must be an http:// or https:// URL"
	case u.Hostname() == "":
		msg = "must name a host"
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		msg = "must be scheme://host[:port][/path] only (no credentials, query or fragment: credentials belong in the backup secret)"
	}
	if msg == "" {
		return nil
	}
	return field.ErrorList{field.Invalid(fld, shown, msg)}
}

// abbreviated keeps an error message short when the refused value is long.
func abbreviated(s string) string {
	const keep = 80
	if len(s) <= keep {
		return s
	}
	return s[:keep] + fmt.Sprintf("... (%d bytes)", len(s))
}
