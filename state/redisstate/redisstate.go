// Package redisstate keeps the state that sandbox serve replicas share in
// Redis (or Valkey): rate-limit buckets (gateway.RateLimiter), the values
// of sandbox.store (codemode.Store), per-session upstream tokens
// (gateway.TokenStore), OAuth grants (gateway.OAuthStore) and what search
// learns from use (codemode.UsageStore), among others. Each type
// implements the interface its package already uses, and passes the same
// conformance suite as the in-memory default (state/statetest).
//
// Every multi-step change is one Lua script, so it is atomic across
// replicas. Tokens and grants, and what users keep (store values, saved
// scripts, call streams' events, big results), are encrypted (AES-256-GCM)
// with a key from the configuration before they reach Redis, each bound to
// where it is stored; the words search learns from are keyed by an HMAC of
// them. A Redis dump or a stranger reading Redis gets no credential and no
// user's data; what stays in clear (names, sizes, times) is listed in
// docs/deploy.md. Times come from the caller's clock (replicas keep theirs
// in step with NTP), so the suites can move time by hand.
package redisstate

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config says how to reach Redis ("gateway.redis" in mcp.json).
type Config struct {
	// URL is redis://[user:password@]host:port/db (rediss:// for TLS).
	URL string
	// TLS forces TLS on a redis:// URL (rediss:// needs nothing more).
	TLS bool
	// KeyPrefix starts every key (default "sandbox:"), so deployments can
	// share a Redis.
	KeyPrefix string
	// EncryptionKey is 32 bytes, base64: tokens, grants and users' data
	// are encrypted with it before they are stored.
	EncryptionKey string
}

// Client is a connection pool to Redis with the key prefix and the
// encryption key.
type Client struct {
	rdb    *redis.Client
	prefix string
	aead   cipher.AEAD
	words  []byte // the HMAC key of the words search learns from (Usage)
	master []byte // the encryption key, for DeriveKey
}

func init() {
	// go-redis logs dial failures itself; here every call that fails
	// returns its error to a caller that reports it.
	redis.SetLogger(quiet{})
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Open connects (lazily: a Redis that is down now fails calls, not Open)
// and checks the configuration.
func Open(cfg Config) (*Client, error) {
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w (want redis://host:6379/0)", err)
	}
	if cfg.TLS && opts.TLSConfig == nil {
		opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: hostOf(opts.Addr)}
	}
	// Calls that need Redis fail fast while it is down, and the pool
	// reconnects by itself when it is back.
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	opts.MaxRetries = 1
	key, err := base64.StdEncoding.DecodeString(cfg.EncryptionKey)
	if err != nil || len(key) != 32 {
		return nil, errors.New(`redis "encryptionKey" must be 32 random bytes in base64 (make one with: head -c 32 /dev/urandom | base64); tokens and users' data are encrypted with it before they are stored`)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	prefix := cfg.KeyPrefix
	if prefix == "" {
		prefix = "sandbox:"
	}
	// A key of its own for the words' HMAC, derived from the one key: a
	// word's digest says nothing about the encryption key.
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("sandbox redisstate usage words v1"))
	return &Client{rdb: redis.NewClient(opts), prefix: prefix, aead: aead, words: mac.Sum(nil), master: key}, nil
}

func hostOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i]
		}
	}
	return addr
}

// DeriveKey is a key of its own for purpose, derived from the encryption
// key: every replica that shares the encryption key derives the same one,
// and a derived key says nothing about the encryption key (code mode's
// context handles are checked with one on any replica).
func (c *Client) DeriveKey(purpose string) []byte {
	mac := hmac.New(sha256.New, c.master)
	mac.Write([]byte("sandbox redisstate derived key v1\x00" + purpose))
	return mac.Sum(nil)
}

// Ping reports whether Redis answers (for /readyz).
func (c *Client) Ping(ctx context.Context) error {
	return unavailable(c.rdb.Ping(ctx).Err())
}

// Close closes the pool.
func (c *Client) Close() error { return c.rdb.Close() }

// key is a key under the prefix: its parts escaped (a principal's key may
// hold ':'), joined by ':'.
func (c *Client) key(parts ...string) string {
	k := c.prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += url.QueryEscape(p)
	}
	return k
}

// seal encrypts a secret, bound to where it is stored (the associated
// data), so a value copied to another key does not decrypt.
func (c *Client) seal(where, plain string) string {
	nonce := make([]byte, c.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return base64.StdEncoding.EncodeToString(c.aead.Seal(nonce, nonce, []byte(plain), []byte(where)))
}

// open decrypts what seal made for where.
func (c *Client) open(where, sealed string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < c.aead.NonceSize() {
		return "", errors.New("a stored secret is damaged")
	}
	n := c.aead.NonceSize()
	plain, err := c.aead.Open(nil, raw[:n], raw[n:], []byte(where))
	if err != nil {
		return "", errors.New("a stored secret does not decrypt with this encryptionKey (was the key changed?)")
	}
	return string(plain), nil
}

// Users' data is sealed in a binary form: sealedPrefix, the nonce, the
// ciphertext and its tag. No JSON text starts with the prefix (a NUL), so a
// value written in clear before values were sealed is told apart and read
// as it is (SealLegacy seals those in place).
const (
	sealedPrefix = "\x00\x01"
	// sealedOverhead is what sealing adds to a value: the store's scripts
	// subtract it, so a principal's limits count the bytes it stored, as
	// every backend's do. (GCM's standard nonce and tag: 12 and 16 bytes.)
	sealedOverhead = len(sealedPrefix) + 12 + 16
)

// sealData encrypts a user's data, bound to where it is stored (the
// associated data), so a value copied to another key, field or position
// does not decrypt.
func (c *Client) sealData(where string, plain []byte) []byte {
	n := c.aead.NonceSize()
	out := make([]byte, len(sealedPrefix)+n, sealedOverhead+len(plain))
	copy(out, sealedPrefix)
	nonce := out[len(sealedPrefix):]
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return c.aead.Seal(out, nonce, plain, []byte(where))
}

// where is what a value is sealed to: its key, and its field (or index)
// there.
func where(key, field string) string { return key + "\x00" + field }

// openData decrypts what sealData made for where. Data without the prefix
// was written in clear by a version before sealing: it is returned as it is.
func (c *Client) openData(where string, stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, []byte(sealedPrefix)) {
		return stored, nil
	}
	if len(stored) < sealedOverhead {
		return nil, errors.New("a value in Redis is damaged (shorter than its encryption)")
	}
	nonce := stored[len(sealedPrefix) : len(sealedPrefix)+c.aead.NonceSize()]
	plain, err := c.aead.Open(nil, nonce, stored[len(sealedPrefix)+len(nonce):], []byte(where))
	if err != nil {
		return nil, errors.New("a value in Redis does not decrypt with this encryptionKey (was the key changed, or the value moved to another key?)")
	}
	return plain, nil
}

// sealedSize is a Lua function: the size of a value before sealData (a
// value in clear, from before sealing, is its own size).
var sealedSize = fmt.Sprintf(`
local function sealedSize(v)
  if string.sub(v, 1, 2) == '\0\1' then return #v - %d end
  return #v
end
`, sealedOverhead)

// unavailable wraps a Redis failure so callers can say what happened.
func unavailable(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	return fmt.Errorf("redis is unavailable: %w", err)
}
