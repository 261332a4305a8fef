#!/usr/bin/env node
// oauth.mjs drives Toolshed's OAuth flow with the official TypeScript SDK
// client (@modelcontextprotocol/sdk, pinned in package-lock.json), as an
// MCP client that only speaks OAuth would:
//
//   node scripts/sdkclient/oauth.mjs <MCP URL> <issuer URL> <access token TTL seconds>
//
// The issuer is the test authorization server of shared/testenv/oidctest,
// which answers login and consent at once, so the browser step is only
// following redirects (with cookies). The steps:
//
//  1. connect without a token: the 401's WWW-Authenticate leads the SDK to
//     the protected resource metadata, the issuer's metadata, dynamic client
//     registration and an authorization URL with PKCE and the resource;
//  2. follow that URL to the redirect carrying the code, and finish: the
//     token request sends the code verifier and the resource;
//  3. connect again, list the tools, call add_task and list_tasks;
//  4. wait until the access token has expired: the next call gets 401, the
//     SDK refreshes the token and the call goes through;
//  5. rotate the issuer's signing key, refresh, and call with a token
//     signed by the new key.
//
// Every HTTP request the SDK makes is printed ("POST RS /mcp tools/call
// 401 ..."), then one "ok ..." line per step. It exits 1 at the first
// failure (2 on bad usage).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  UnauthorizedError, discoverAuthorizationServerMetadata, refreshAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';

const [mcpURL, issuer, ttl] = process.argv.slice(2);
if (!mcpURL || !issuer || !ttl) {
  console.error('usage: oauth.mjs <MCP URL> <issuer URL> <access token TTL seconds>');
  process.exit(2);
}
// Never listened on: the code is read from the redirect's Location.
const redirectUrl = 'http://127.0.0.1:9/callback';
const rsOrigin = new URL(mcpURL).origin;

// loggingFetch is the SDK's fetch: every request and its answer is printed.
async function loggingFetch(url, init = {}) {
  const res = await fetch(url, init);
  const u = new URL(url);
  let what = '';
  try {
    what = ` ${JSON.parse(init.body).method ?? ''}`.trimEnd();
  } catch {}
  const challenge = res.headers.get('www-authenticate');
  console.log(`${init.method ?? 'GET'} ${u.origin === rsOrigin ? 'RS' : 'AS'} ${u.pathname}${what} ${res.status}` +
    (challenge ? ` WWW-Authenticate: ${challenge}` : ''));
  return res;
}

// provider keeps the client's registration, tokens and PKCE verifier in
// memory, and the authorization URL the SDK would open in a browser.
const provider = {
  authorizationURL: undefined,
  _client: undefined, _tokens: undefined, _verifier: undefined,
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: 'Toolshed OAuth end-to-end test', redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  },
  clientInformation() { return this._client; },
  saveClientInformation(info) { this._client = info; },
  tokens() { return this._tokens; },
  saveTokens(tokens) { this._tokens = tokens; },
  redirectToAuthorization(url) { this.authorizationURL = url; },
  saveCodeVerifier(v) { this._verifier = v; },
  codeVerifier() { return this._verifier; },
};

// browse follows the authorization URL's redirects, as a browser would,
// to the redirect URI, and returns the code it carries.
async function browse(start) {
  const cookies = new Map();
  let url = start;
  for (let hops = 0; hops < 12; hops++) {
    if (url.startsWith(redirectUrl)) {
      return new URL(url).searchParams.get('code');
    }
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    console.log(`GET AS ${new URL(url).pathname} ${res.status} (browser)`);
    for (const c of res.headers.getSetCookie()) {
      const [name, ...value] = c.split(';')[0].split('=');
      if (value.join('=') === '') cookies.delete(name.trim());
      else cookies.set(name.trim(), value.join('='));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`no redirect from ${url}: ${res.status} ${await res.text()}`);
    url = new URL(location, url).href;
  }
  throw new Error('too many redirects');
}

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider, fetch: loggingFetch });
  const client = new Client({ name: 'toolshed-oauth-e2e', version: '1.0.0' });
  return { transport, client, connected: client.connect(transport) };
}

function kidOf(token) {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url')).kid;
}

function check(ok, message) {
  if (!ok) throw new Error(message);
}

async function main() {
  console.log('step 1: connect without a token');
  const first = await connect();
  const refused = await first.connected.then(() => false, (err) => err instanceof UnauthorizedError);
  check(refused && provider.authorizationURL, 'the first connection was not sent to authorization');
  const asked = provider.authorizationURL.searchParams;
  check(asked.get('resource') === mcpURL && asked.get('code_challenge_method') === 'S256',
    `authorization URL lacks the resource or PKCE: ${provider.authorizationURL}`);
  console.log(`ok authorization asked: client ${asked.get('client_id')}, scope "${asked.get('scope')}", resource ${asked.get('resource')}`);

  console.log('step 2: authorize in a (headless) browser, exchange the code');
  const code = await browse(provider.authorizationURL.href);
  await first.transport.finishAuth(code);
  const tokens = provider.tokens();
  check(tokens?.access_token && tokens?.refresh_token, 'no access and refresh token');
  console.log(`ok tokens: scope "${tokens.scope}", expires_in ${tokens.expires_in}, key ${kidOf(tokens.access_token)}`);

  console.log('step 3: tools/list and tools/call with the token');
  const { client, connected } = await connect();
  await connected;
  const names = (await client.listTools()).tools.map((t) => t.name);
  check(names.includes('add_task') && names.includes('hello'), `tools/list: ${names}`);
  console.log(`ok tools/list: ${names.length} tools`);
  const added = await client.callTool({ name: 'add_task', arguments: { title: 'Added over OAuth' } });
  check(!added.isError && added.structuredContent?.title === 'Added over OAuth', `add_task: ${JSON.stringify(added)}`);
  const listed = await client.callTool({ name: 'list_tasks', arguments: {} });
  console.log(`ok tools/call add_task, list_tasks: ${JSON.stringify(listed.structuredContent)}`);

  console.log(`step 4: wait for the access token to expire (${ttl} s and the server's leeway)`);
  const expired = provider.tokens().access_token;
  await new Promise((resolve) => setTimeout(resolve, (Number(ttl) + 6) * 1000));
  const late = await client.callTool({ name: 'hello', arguments: { name: 'after expiry' } });
  check(!late.isError && provider.tokens().access_token !== expired, `after expiry: ${JSON.stringify(late)}`);
  console.log(`ok refreshed after expiry: ${late.structuredContent.greeting}`);

  console.log('step 5: rotate the issuer\'s signing key, refresh, call');
  const rotated = await (await fetch(`${issuer}/rotate`, { method: 'POST' })).json();
  const metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: loggingFetch });
  provider.saveTokens(await refreshAuthorization(issuer, {
    metadata, clientInformation: provider.clientInformation(), refreshToken: provider.tokens().refresh_token,
    resource: new URL(mcpURL), fetchFn: loggingFetch,
  }));
  const kid = kidOf(provider.tokens().access_token);
  check(kid === rotated.kid, `the refreshed token is signed with ${kid}, not the new key ${rotated.kid}`);
  const after = await client.callTool({ name: 'hello', arguments: { name: 'after rotation' } });
  check(!after.isError, `after rotation: ${JSON.stringify(after)}`);
  console.log(`ok new key ${kid} accepted: ${after.structuredContent.greeting}`);
  await client.close();
}

main().catch((err) => {
  console.error(`FAIL ${err.stack ?? err}`);
  process.exit(1);
});
