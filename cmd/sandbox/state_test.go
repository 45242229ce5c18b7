package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/config"
)

// redisKey is a valid "encryptionKey": 32 bytes in base64.
const redisKey = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="

// TestSharedStateComesFromTheConfiguredBackend: without a backend in the
// config every store stays the process's own; with "gateway.redis" every
// kind of shared state comes from Redis (opened lazily: no server needed
// here); a bad block fails as before, naming it.
func TestSharedStateComesFromTheConfiguredBackend(t *testing.T) {
	t.Setenv("SANDBOX_REDIS_URL", "")
	if s, err := openShared(&config.File{}); s != nil || err != nil {
		t.Fatalf("no backend configured: %+v, %v", s, err)
	}
	s, err := openShared(&config.File{Redis: &config.Redis{URL: "redis://127.0.0.1:1/0", KeyPrefix: "t:", EncryptionKey: redisKey}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if s.backend != "Redis" || s.rateLimiter == nil || s.tokens == nil || s.oauth == nil || s.store == nil || s.scripts == nil ||
		s.shapes == nil || s.usage == nil || s.sessions == nil || s.callStreams == nil || s.ping == nil {
		t.Fatalf("shared state on Redis lacks a store: %+v", s)
	}
	_, err = openShared(&config.File{Redis: &config.Redis{URL: "redis://127.0.0.1:1/0", EncryptionKey: "c2hvcnQ="}})
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != 2 || !strings.HasPrefix(exit.msg, "gateway.redis: ") || !strings.Contains(exit.msg, "32 random bytes") {
		t.Fatalf("a short encryption key: %v", err)
	}
}

// TestRedisFromTheEnvironment: SANDBOX_REDIS_URL (with SANDBOX_REDIS_KEY)
// names the Redis when the config does not, and overrides its URL.
func TestRedisFromTheEnvironment(t *testing.T) {
	t.Setenv("SANDBOX_REDIS_URL", "redis://127.0.0.1:2/0")
	t.Setenv("SANDBOX_REDIS_KEY", redisKey)
	file := &config.File{}
	s, err := openShared(file)
	if err != nil || s == nil {
		t.Fatalf("openShared = %+v, %v", s, err)
	}
	defer s.close()
	if file.Redis == nil || file.Redis.URL != "redis://127.0.0.1:2/0" || file.Redis.EncryptionKey != redisKey {
		t.Fatalf("redis settings from the environment: %+v", file.Redis)
	}
}

// TestOneSharedStateBackend: a config that names two backends is refused
// rather than served from one of them.
func TestOneSharedStateBackend(t *testing.T) {
	closed := 0
	fake := func(name string) stateBackend {
		return func(*config.File) (*sharedState, error) {
			return &sharedState{backend: name, close: func() error { closed++; return nil }}, nil
		}
	}
	defer func(saved []stateBackend) { stateBackends = saved }(stateBackends)
	stateBackends = []stateBackend{fake("A"), fake("B")}
	_, err := openShared(&config.File{})
	if err == nil || !strings.Contains(err.Error(), "two backends for shared state (A and B)") || closed != 2 {
		t.Fatalf("two backends: %v (closed %d)", err, closed)
	}
}
