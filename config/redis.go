package config

// Redis is the "redis" block of "gateway": where the state sandbox serve
// replicas share is kept. config only reads it; cmd/sandbox opens the
// backend (state/redisstate) from it, so config imports no backend.
type Redis struct {
	// URL is redis://[user:password@]host:port/db (rediss:// for TLS).
	URL string
	// TLS forces TLS on a redis:// URL.
	TLS bool
	// KeyPrefix starts every key ("": the backend's default, "sandbox:").
	KeyPrefix string
	// EncryptionKey is 32 bytes in base64 that encrypt the tokens and
	// grants kept in Redis.
	EncryptionKey string
}

// parseRedis reads the "redis" block of "gateway": {"url":
// "redis://host:6379/0", "tls": false, "keyPrefix": "sandbox:",
// "encryptionKey": "${SANDBOX_REDIS_KEY}"}.
func (p *parser) parseRedis(n *jsonNode) (*Redis, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, `"redis" must be an object such as {"url": "redis://host:6379/0", "encryptionKey": "${SANDBOX_REDIS_KEY}"}, found %s`, n.kind)
	}
	c := &Redis{}
	var err error
	for _, k := range n.keys {
		switch k.name {
		case "url":
			c.URL, err = p.expandedString(k.value, "url")
		case "tls":
			c.TLS, err = p.boolean(k.value, "tls")
		case "keyPrefix":
			c.KeyPrefix, err = p.str(k.value, "keyPrefix")
		case "encryptionKey":
			c.EncryptionKey, err = p.expandedString(k.value, "encryptionKey")
		default:
			return nil, p.errAt(k.offset, `unknown key %q in "redis"; known keys: url, tls, keyPrefix, encryptionKey`, k.name)
		}
		if err != nil {
			return nil, err
		}
	}
	if c.URL == "" {
		return nil, p.errAt(n.offset, `"redis" needs "url" (redis://host:6379/0)`)
	}
	if c.EncryptionKey == "" {
		return nil, p.errAt(n.offset, `"redis" needs "encryptionKey": 32 random bytes in base64 that encrypt the tokens kept in Redis (head -c 32 /dev/urandom | base64), usually "${SANDBOX_REDIS_KEY}"`)
	}
	return c, nil
}
