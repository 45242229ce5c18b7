package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"

	"github.com/sandboxrt/sandbox/config"
)

// requestStateKey is the key that seals the requestStates of input_required
// answers (gateway/frontend/requeststate.go) when replicas share a Redis:
// derived from its encryption key, so every replica opens the states any
// of them issued, and the key itself is never used for two things. nil
// without Redis: the front end draws a key of its own, which is right for
// one process. openRedisState has checked the key already.
func requestStateKey(file *config.File) []byte {
	if file.Redis == nil {
		return nil
	}
	secret, err := base64.StdEncoding.DecodeString(file.Redis.EncryptionKey)
	if err != nil || len(secret) == 0 {
		return nil
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("sandbox requestState key v1"))
	return mac.Sum(nil)
}
