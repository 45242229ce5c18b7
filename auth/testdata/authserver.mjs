// A real OAuth 2.1 authorization server for auth's tests: oidc-provider
// (https://github.com/panva/node-oidc-provider, OpenID certified), pinned in
// peers/package.json. It issues JWT access tokens (RFC 9068) by the
// client_credentials grant, for the audience a resource indicator (RFC 8707)
// names, signed with ES256 keys it publishes at its jwks_uri.
//
// Run: OIDC_PROVIDER=<peers/node_modules/oidc-provider> node authserver.mjs
// It listens on 127.0.0.1 (a free port) and prints one JSON line:
// {"issuer": "http://127.0.0.1:<port>"}. Test-only endpoints:
//   POST /test/rotate  a new signing key signs from now on; the old one stays
//                      published (as an issuer rotating its keys does); the
//                      answer is {"kid": "<new kid>"}.
//
// Clients (client_secret_basic):
//   agent / agent-secret    scopes mcp:tools server:fs
//   future / future-secret  its tokens have nbf one hour after iat
//   acme / acme-secret      its tokens carry org_id "acme"
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.OIDC_PROVIDER;
if (!dir) {
  console.error('authserver.mjs: set OIDC_PROVIDER to the oidc-provider package folder');
  process.exit(2);
}
const { default: Provider } = await import(pathToFileURL(join(dir, 'lib', 'index.js')).href);

function newKey() {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'ES256', use: 'sig' };
}

const resourceScopes = 'mcp:tools server:fs server:github';

function makeProvider(issuer, keys) {
  const provider = new Provider(issuer, {
    clients: [
      { client_id: 'agent', client_secret: 'agent-secret', grant_types: ['client_credentials'], response_types: [], redirect_uris: [], scope: 'mcp:tools server:fs' },
      { client_id: 'future', client_secret: 'future-secret', grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
      { client_id: 'acme', client_secret: 'acme-secret', grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
    ],
    jwks: { keys },
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    scopes: resourceScopes.split(' '),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Every resource gets JWT access tokens whose audience is the
        // resource indicator itself.
        getResourceServerInfo: (ctx, resource) => ({
          scope: resourceScopes,
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    extraTokenClaims: (ctx, token) => (token.clientId === 'acme' ? { org_id: 'acme' } : undefined),
    formats: {
      customizers: {
        jwt: (ctx, token, jwt) => {
          if (token.clientId === 'future') jwt.payload.nbf = jwt.payload.iat + 3600;
        },
      },
    },
  });
  provider.on('server_error', (ctx, err) => console.error('authserver.mjs: server_error', err));
  return provider;
}

let keys = [newKey()];
let callback;
const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/test/rotate') {
    keys = [newKey(), ...keys];
    callback = makeProvider(issuer, keys).callback();
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ kid: keys[0].kid }));
    return;
  }
  callback(req, res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
callback = makeProvider(issuer, keys).callback();
process.stdout.write(JSON.stringify({ issuer }) + '\n');

// The test closes stdin (or dies): stop.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
