package snapstore

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/swauth"
)

// swiftClient logs in and returns the object-store client. Both ways log in again by themselves when a
// token expires (a sidecar runs far longer than a token lives).
func (c swiftConfig) swiftClient(ctx context.Context) (*gophercloud.ServiceClient, error) {
	httpClient, err := c.httpClient()
	if err != nil {
		return nil, err
	}
	var client *gophercloud.ServiceClient
	if c.auth == swiftAuthV1 {
		client, err = c.v1Client(ctx, httpClient)
	} else {
		client, err = c.keystoneClient(ctx, httpClient)
	}
	if err != nil {
		return nil, fmt.Errorf("%s authentication at %s: %w", c.auth, c.authURL, err)
	}
	if c.endpoint != "" {
		client.Endpoint = gophercloud.NormalizeURL(c.endpoint)
	}
	return client, nil
}

func (c swiftConfig) keystoneClient(ctx context.Context, httpClient http.Client) (*gophercloud.ServiceClient, error) {
	provider, err := openstack.NewClient(c.authURL)
	if err != nil {
		return nil, err
	}
	provider.HTTPClient = httpClient
	if err := openstack.Authenticate(ctx, provider, c.keystoneOptions()); err != nil {
		return nil, err
	}
	client, err := openstack.NewObjectStorageV1(provider, c.endpointOpts())
	if err != nil {
		return nil, fmt.Errorf("object-store endpoint (region %q) in the catalog: %w", c.region, err)
	}
	return client, nil
}

// v1Client logs in with Swift's own v1 authentication. gophercloud's swauth does not log in again by
// itself, so the provider gets a ReauthFunc; the login requests go through a provider client of their
// own, without one, so that a refused login is an error rather than another login.
func (c swiftConfig) v1Client(ctx context.Context, httpClient http.Client) (*gophercloud.ServiceClient, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(c.authURL, "/"), strings.TrimPrefix(swiftV1AuthPath, "/"))
	login := &gophercloud.ProviderClient{IdentityBase: base, IdentityEndpoint: c.authURL, HTTPClient: httpClient}
	opts := swauth.AuthOpts{User: c.username, Key: c.password}
	auth, err := swauth.Auth(ctx, login, opts).Extract()
	if err != nil {
		return nil, err
	}
	if auth.StorageURL == "" {
		return nil, fmt.Errorf("the response names no storage URL (X-Storage-Url)")
	}
	provider := &gophercloud.ProviderClient{IdentityBase: base, IdentityEndpoint: c.authURL, HTTPClient: httpClient}
	provider.UseTokenLock()
	provider.SetToken(auth.Token)
	provider.ReauthFunc = func(ctx context.Context) error {
		again, err := swauth.Auth(ctx, login, opts).Extract()
		if err != nil {
			return fmt.Errorf("logging in again at %s: %w", c.authURL, err)
		}
		provider.SetToken(again.Token)
		return nil
	}
	return &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: gophercloud.NormalizeURL(auth.StorageURL)}, nil
}
