package snapstore

import (
	"fmt"
	"strings"
)

// storeLocation is where a store puts its objects: the provider, the container and the prefix, and what
// of the backup secret decides which account, endpoint or region the container is looked up in. It
// never holds credentials; its values (bucket names, endpoints, regions, account names) may be logged.
//
// OpenWatched records it when it opens a store and refuses a reopen whose secret resolves to another
// one: a credential rotation must not move the backups (see OpenWatched).
type storeLocation []locationField

type locationField struct {
	name, value string
}

// resolveLocation resolves the location of the store cfg describes from cfg and the secret as it is now,
// with the same functions New uses, without opening a client or reaching the network.
func resolveLocation(cfg Config) (storeLocation, error) {
	provider, err := CanonicalProvider(cfg.Provider)
	if err != nil {
		return nil, err
	}
	secret := secretDir{dir: cfg.SecretDir, values: cfg.SecretValues}
	loc := storeLocation{{"provider", string(provider)}, {"prefix", cfg.Prefix}}
	switch provider {
	case ProviderLocal:
		lc, err := localConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		return append(loc, locationField{"directory", lc.dir}), nil
	case ProviderS3, ProviderOSS, ProviderECS, ProviderOCS:
		var sc s3Config
		switch provider {
		case ProviderS3:
			sc, err = s3ConfigFrom(cfg, secret)
		case ProviderOSS:
			sc, err = ossConfigFrom(cfg, secret)
		default:
			sc, err = s3CompatibleConfigFrom(cfg, secret, provider)
		}
		if err != nil {
			return nil, err
		}
		return append(loc, locationField{"bucket", sc.bucket}, locationField{"endpoint", sc.endpoint}, locationField{"region", sc.region}), nil
	case ProviderABS:
		ac, err := absConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		// The container URL holds the storage account and the domain (or the endpoint override).
		return append(loc, locationField{"container", ac.container}, locationField{"containerURL", ac.containerURL}), nil
	case ProviderGCS:
		gc, err := gcsConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		// Bucket names are global; the service account's project does not decide where objects go.
		return append(loc, locationField{"bucket", gc.bucket}, locationField{"endpoint", gc.endpoint}), nil
	case ProviderSwift:
		sc, err := swiftConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		// The object-store account is the tenant (project) of the user's domain, found in the catalog of
		// authURL for region, unless the endpoint override names it.
		return append(loc, locationField{"container", sc.container}, locationField{"authURL", sc.authURL},
			locationField{"region", sc.region}, locationField{"domainName", sc.domainName},
			locationField{"tenantName", sc.tenantName}, locationField{"endpoint", sc.endpoint}), nil
	default:
		return nil, fmt.Errorf("storage provider %s has no implementation", provider)
	}
}

// changesTo lists the fields whose values differ in next, each as `name "old" → "new"`, in l's order
// (fields only one of them has count as changed).
func (l storeLocation) changesTo(next storeLocation) []string {
	values := make(map[string]string, len(next))
	for _, f := range next {
		values[f.name] = f.value
	}
	var changes []string
	seen := make(map[string]bool, len(l))
	for _, f := range l {
		seen[f.name] = true
		if v, ok := values[f.name]; !ok || v != f.value {
			changes = append(changes, fmt.Sprintf("%s %q → %q", f.name, f.value, v))
		}
	}
	for _, f := range next {
		if !seen[f.name] {
			changes = append(changes, fmt.Sprintf("%s %q → %q", f.name, "", f.value))
		}
	}
	return changes
}

// String is the location for logs: name=value pairs.
func (l storeLocation) String() string {
	parts := make([]string, len(l))
	for i, f := range l {
		parts[i] = fmt.Sprintf("%s=%q", f.name, f.value)
	}
	return strings.Join(parts, " ")
}

// locationChangedError refuses a reopen whose secret resolves to another store location.
type locationChangedError struct {
	changes []string
}

func (e *locationChangedError) Error() string {
	return fmt.Sprintf("the changed backup secret resolves to another store location (%s); refusing to move the store of a running "+
		"member, whose next deltas would land where no full snapshot lies under them: still using the previous store; "+
		"restart the pod to move the store", strings.Join(e.changes, ", "))
}
