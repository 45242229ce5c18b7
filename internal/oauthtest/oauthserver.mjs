// A real OAuth 2.1 authorization server for the gateway's login tests:
// oidc-provider (https://github.com/panva/node-oidc-provider, OpenID
// certified), pinned in peers/package.json. It runs the authorization code
// flow with PKCE that `sandbox login` drives, issues JWT access tokens
// (RFC 9068) for the audience a resource indicator (RFC 8707) names, and
// refresh tokens (rotated at each use).
//
// Run: OIDC_PROVIDER=<peers/node_modules/oidc-provider> node oauthserver.mjs
// Environment:
//   NO_REGISTRATION=1  no dynamic client registration (RFC 7591)
//   ACCESS_TTL=<s>     access token lifetime (default 300)
// It listens on 127.0.0.1 (a free port) and prints one JSON line:
// {"issuer": "http://127.0.0.1:<port>"}.
//
// The person in the browser is simulated: /interaction/<uid> logs in
// "alice" and consents to what the client asked for, with no form. Test-only
// endpoint: POST /test/revoke with a refresh token as the body revokes it.
//
// Pre-registered client (for servers without registration): "sandbox-cli",
// public, native (any loopback port), redirect http://127.0.0.1/callback.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.OIDC_PROVIDER;
if (!dir) {
  console.error('oauthserver.mjs: set OIDC_PROVIDER to the oidc-provider package folder');
  process.exit(2);
}
const { default: Provider } = await import(pathToFileURL(join(dir, 'lib', 'index.js')).href);

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const key = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'ES256', use: 'sig' };
const accessTTL = Number(process.env.ACCESS_TTL || 300);
const resourceScopes = 'mcp:tools';

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'sandbox-cli',
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
    },
  ],
  jwks: { keys: [key] },
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  scopes: ['openid', 'offline_access', ...resourceScopes.split(' ')],
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  // Every client allowed the refresh_token grant gets refresh tokens, as
  // most authorization servers in front of MCP servers do.
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: process.env.NO_REGISTRATION !== '1' },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: resourceScopes,
        audience: resource,
        accessTokenTTL: accessTTL,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
provider.on('server_error', (ctx, err) => console.error('oauthserver.mjs: server_error', err));
const callback = provider.callback();

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'alice' } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

server.on('request', (req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((err) => {
      console.error('oauthserver.mjs: interaction', err);
      res.statusCode = 500;
      res.end(String(err));
    });
    return;
  }
  if (req.method === 'POST' && req.url === '/test/revoke') {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', async () => {
      const token = await provider.RefreshToken.find(body.trim());
      if (token) await token.destroy();
      res.end(JSON.stringify({ revoked: Boolean(token) }));
    });
    return;
  }
  callback(req, res);
});
process.stdout.write(JSON.stringify({ issuer }) + '\n');

// The test closes stdin (or dies): stop.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
