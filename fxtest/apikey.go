package fxtest

import (
	"crypto/rand"
	"encoding/hex"
	"maps"

	"github.com/fxhq/fx/middleware"
)

// APIKeys mints random API keys for principals and builds the verifier
// that accepts them (middleware.NewAPIKeys, the production verifier):
//
//	keys := fxtest.NewAPIKeys()
//	admin := keys.Key(middleware.Principal{Subject: "svc", Roles: []string{"admin"}})
//	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys.Verifier()}))
//	c.Get("/admin").Header(middleware.DefaultAPIKeyHeader, admin).Do()
//
// Mint the keys before building the verifier: a verifier holds the keys
// minted when it was built. An APIKeys is not safe for concurrent use.
type APIKeys struct {
	keys map[string]middleware.Principal
}

// NewAPIKeys returns an empty key set.
func NewAPIKeys() *APIKeys { return &APIKeys{keys: map[string]middleware.Principal{}} }

// Key mints a new key (128 random bits, "fxtest_" and 32 hex digits) for p
// and returns it.
func (k *APIKeys) Key(p middleware.Principal) string {
	var b [16]byte
	rand.Read(b[:])
	key := "fxtest_" + hex.EncodeToString(b[:])
	k.keys[key] = p
	return key
}

// Verifier returns the verifier of the keys minted so far, for
// middleware.AuthConfig.APIKeys. It panics when no key was minted.
func (k *APIKeys) Verifier() *middleware.APIKeys {
	v, err := middleware.NewAPIKeys(maps.Clone(k.keys))
	if err != nil {
		panic("fxtest: APIKeys.Verifier: " + err.Error())
	}
	return v
}
