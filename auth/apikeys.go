package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"slices"
)

// apiKeys verifies the configured API keys. It holds only their SHA-256
// digests: a presented credential is hashed and compared with every digest
// in constant time, so neither the comparison nor the secret's length shows
// in the timing, and no early exit tells which key came close.
type apiKeys struct {
	keys []apiKey
}

type apiKey struct {
	digest    [sha256.Size]byte
	principal Principal
}

// constantTimeCompare is subtle.ConstantTimeCompare; a test counts its calls.
var constantTimeCompare = subtle.ConstantTimeCompare

// newAPIKeys takes validated keys.
func newAPIKeys(keys []APIKey) *apiKeys {
	ks := &apiKeys{}
	for _, k := range keys {
		var d [sha256.Size]byte
		if k.Key != "" {
			copy(d[:], sha256Sum(k.Key))
		} else {
			b, _ := hex.DecodeString(k.SHA256)
			copy(d[:], b)
		}
		ks.keys = append(ks.keys, apiKey{digest: d, principal: k.Principal()})
	}
	return ks
}

// lookup returns the principal of the key equal to credential. It compares
// with every key whatever the outcome.
func (ks *apiKeys) lookup(credential string) (Principal, bool) {
	d := sha256.Sum256([]byte(credential))
	match := -1
	for i := range ks.keys {
		eq := constantTimeCompare(d[:], ks.keys[i].digest[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return Principal{}, false
	}
	p := ks.keys[match].principal
	p.Scopes = slices.Clone(p.Scopes)
	return p, true
}

// owns reports whether an API key authenticates the principal with this
// identity (an access token's subject must not pass for a key's name).
func (ks *apiKeys) owns(p Principal) bool {
	for _, k := range ks.keys {
		if k.principal.Key() == p.Key() {
			return true
		}
	}
	return false
}

func sha256Sum(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}

// Principal is who the key authenticates: its name, in its tenant (the name
// when none is given), scoped to its servers, an operator when it says so.
func (k APIKey) Principal() Principal {
	tenant := k.Tenant
	if tenant == "" {
		tenant = k.Name
	}
	var scopes []string
	for _, s := range k.Servers {
		scopes = append(scopes, ServerScope(s))
	}
	return Principal{ID: k.Name, Tenant: tenant, Scopes: scopes, Operates: k.Operator}
}
