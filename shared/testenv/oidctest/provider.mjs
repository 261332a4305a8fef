// The authorization server of Toolshed's end-to-end OAuth tests:
// oidc-provider (npm, pinned in the repository's package-lock) on loopback,
// started by package oidctest. One JSON argument configures it:
//
//   {"port": 40123, "account": "alice", "machine": {"id": "...", "secret": "..."},
//    "scopes": ["toolshed:read", "toolshed:full"], "accessTokenTTL": 5}
//
// What it offers: discovery (OpenID Connect), dynamic client registration,
// the authorization code flow with PKCE (required), refresh tokens, and
// client credentials for one static "machine" client; resource indicators
// (RFC 8707) for any resource, each access token a JWT (RS256) whose aud is
// the resource asked for. The login and consent steps are answered at once
// (the account logs in, every scope asked for is granted), so that a client
// only has to follow redirects. POST /rotate makes a new signing key the
// current one, keeping the old one published. Every request is logged to
// stderr as "AS <method> <path> <status>". The process exits when its
// standard input closes.
import crypto from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const opts = JSON.parse(process.argv[2]);
const issuer = `http://127.0.0.1:${opts.port}`;

process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();

// SharedAdapter keeps every model (clients, grants, codes, tokens,
// sessions) in one map shared by the provider instances a rotation
// creates, so that registrations and refresh tokens outlive a rotation.
// (oidc-provider's own memory adapter is one per instance.)
const stored = new Map();
const byGrant = new Map();
class SharedAdapter {
  constructor(model) { this.model = model; }
  key(id) { return `${this.model}:${id}`; }
  async upsert(id, payload) {
    stored.set(this.key(id), payload);
    if (payload.uid) stored.set(`uid:${payload.uid}`, id);
    if (payload.userCode) stored.set(`userCode:${payload.userCode}`, id);
    if (payload.grantId) byGrant.set(payload.grantId, [...(byGrant.get(payload.grantId) ?? []), this.key(id)]);
  }
  async find(id) { return stored.get(this.key(id)); }
  async findByUid(uid) { return this.find(stored.get(`uid:${uid}`)); }
  async findByUserCode(userCode) { return this.find(stored.get(`userCode:${userCode}`)); }
  async consume(id) { stored.get(this.key(id)).consumed = Math.floor(Date.now() / 1000); }
  async destroy(id) { stored.delete(this.key(id)); }
  async revokeByGrantId(grantId) {
    for (const key of byGrant.get(grantId) ?? []) stored.delete(key);
    byGrant.delete(grantId);
  }
}

let serial = 0;
function newKey() {
  serial += 1;
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: `as-key-${serial}`, alg: 'RS256', use: 'sig' };
}

function configuration(keys) {
  return {
    adapter: SharedAdapter,
    jwks: { keys },
    clients: [{
      client_id: opts.machine.id,
      client_secret: opts.machine.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    }],
    cookies: { keys: ['toolshed-oidctest-cookies'] },
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    scopes: ['openid', 'offline_access', ...opts.scopes],
    pkce: { required: () => true },
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => ({
          scope: opts.scopes.join(' '),
          audience: resource,
          accessTokenTTL: opts.accessTokenTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  };
}

let keys = [newKey()];
let provider = new Provider(issuer, configuration(keys));

// interact logs the account in and grants what the client asked for.
async function interact(req, res) {
  const { prompt, params, session, grantId } = await provider.interactionDetails(req, res);
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: opts.account } };
  } else {
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

// rotate makes a new key the signing key: the provider is rebuilt with it
// first (clients, grants and tokens stay in the SharedAdapter).
function rotate(res) {
  keys = [newKey(), ...keys];
  provider = new Provider(issuer, configuration(keys));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kid: keys[0].kid }));
}

http.createServer((req, res) => {
  res.on('finish', () => process.stderr.write(`AS ${req.method} ${req.url.split('?')[0]} ${res.statusCode}\n`));
  if (req.url.startsWith('/interaction/')) {
    interact(req, res).catch((err) => {
      process.stderr.write(`interaction failed: ${err.stack}\n`);
      res.writeHead(500);
      res.end(String(err));
    });
  } else if (req.method === 'POST' && req.url === '/rotate') {
    rotate(res);
  } else {
    provider.callback()(req, res);
  }
}).listen(opts.port, '127.0.0.1');
