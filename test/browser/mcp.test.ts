/**
 * The MCP end-to-end harness (docs/mcp.md): the official MCP TypeScript SDK's client-side
 * authorization is the client, a client no one here wrote. It connects to the example MCP
 * server (examples/mcp-server), gets its 401, discovers the protected resource metadata this
 * service hosts (RFC 9728) and the authorization server metadata (RFC 8414), authorizes with
 * PKCE S256 and `resource` (RFC 8707) through the login page in Chromium (the emailed code from
 * the SMTP sink), exchanges the code, and calls the server's tool with the token: checked by
 * introspection, then by JWT verification with `aud`.
 *
 * `mcpRun` takes the provider variant, one run each: a pre-registered client; dynamic
 * registration (RFC 7591: no clientInformation, saveClientInformation keeps what registration
 * returns) while no tenant accepts client ID metadata documents; and a client ID metadata
 * document (`clientMetadataUrl`, served over loopback HTTPS) once the tenant accepts them. The
 * self-registered clients meet the consent page, which shows what they stated as unverified.
 * Runs only in the browser lane.
 */
import test, { type ExecutionContext } from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { decodeJwt } from 'jose';
import { request } from 'node:http';
import type { Browser } from 'playwright-core';
import { startMcpServer } from '../../examples/mcp-server/server.js';
import { api } from '../helpers/api.js';
import { freePort } from '../helpers/daemon.js';
import { startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { codeFrom, REDIRECT } from '../helpers/oauth.js';
import { startDocumentServer, type DocumentServer } from '../helpers/document-server.js';
import { clientCredentialsToken, credentialsClient, openServices } from '../helpers/seed.js';
import { SCOPE_PLATFORM } from '../../shared/scopes.js';
import { interceptCallback, launchBrowser, newPage, withTimeout } from './helpers.js';

/** How the MCP client gets its client_id: pre-registered, a metadata document URL, or registration. */
export interface ProviderVariant {
  name: string;
  /** Pre-registered credentials; undefined: the SDK registers (DCR) or uses clientMetadataUrl (CIMD). */
  clientInformation?: OAuthClientInformationMixed;
  /** A client ID metadata document's URL (draft-ietf-oauth-client-id-metadata-document). */
  clientMetadataUrl?: string;
}

/** An in-memory OAuthClientProvider whose "redirect" is recorded for the browser to follow. */
class TestProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly clientMetadataUrl: string | undefined;
  readonly saveClientInformation: ((info: OAuthClientInformationMixed) => void) | undefined;

  constructor(variant: ProviderVariant) {
    this.info = variant.clientInformation;
    this.clientMetadataUrl = variant.clientMetadataUrl;
    // Without pre-registered credentials the SDK needs somewhere to keep what it obtains.
    this.saveClientInformation = variant.clientInformation ? undefined : (info) => void (this.info = info);
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP end-to-end client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'openid email',
    };
  }
  state() {
    return 'mcp-state';
  }
  clientInformation() {
    return this.info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  // Kept across the redirect, as a browser-based client keeps it in storage: where the
  // authorization server is (from the hosted metadata), for the code's redemption.
  discovery: OAuthDiscoveryState | undefined;
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

let env: LoginEnv;
let browser: Browser;
let admin: string;
let port: number;
let mcpUrl: string;
let rs: { clientId: string; secret: string };
let preRegistered: { clientId: string; secret: string };
let platformAdmin: string;
let docs: DocumentServer;
let documentUrl: string;

test.before(async () => {
  // The client ID metadata document is served over loopback HTTPS with a test-made certificate.
  docs = await startDocumentServer();
  documentUrl = docs.serveDocument('/mcp-client.json', {
    client_name: 'Document MCP client',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    client_uri: 'https://agent.example/',
  });
  env = await startLoginEnv({ IAM_OUTBOUND_ALLOW_LOOPBACK: 'true', IAM_OUTBOUND_CA_FILE: docs.cert.certFile });
  browser = await launchBrowser();
  port = await freePort();
  mcpUrl = `http://127.0.0.1:${port}/mcp`;
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  rs = await credentialsClient(directory, env.app.tenantId, {
    name: 'Example MCP server',
    resource_identifiers: [mcpUrl],
  });
  // A first-party client with no registered audiences: it may name any resource server of its tenant.
  const c = await directory.createClient(
    env.app.tenantId,
    { name: 'MCP client', redirect_uris: [REDIRECT], first_party: true, scopes: ['openid', 'email'] },
    { type: 'system', id: 'test' },
  );
  preRegistered = { clientId: c.client.client_id, secret: c.client_secret! };
  const platform = await directory.createClient(
    env.app.tenantId,
    { name: 'platform admin', grant_types: ['client_credentials'], scopes: [SCOPE_PLATFORM] },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  platformAdmin = await clientCredentialsToken(env.d.url, platform.client.client_id, platform.client_secret!);
  // Anonymous registrations (RFC 7591) land in the default registration tenant, open to them.
  for (const [path, body] of [
    ['/api/admin/platform/registration', { defaultTenantId: env.app.tenantId }],
    [`/api/admin/tenants/${env.app.tenantId}/registration-policy`, { mode: 'open' }],
  ] as const) {
    const r = await api(env.d.url, 'PUT', path, { token: platformAdmin, body });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
  }
  admin = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
  const put = await api(
    env.d.url,
    'PUT',
    `/api/admin/tenants/${env.app.tenantId}/clients/${rs.clientId}/resource-metadata`,
    {
      token: admin,
      body: { resource: mcpUrl, scopes_supported: ['openid', 'email'], resource_name: 'Example MCP server' },
    },
  );
  if (put.status !== 201) throw new Error(`resource metadata: ${put.status} ${put.text}`);
});
test.after.always(async () => {
  await browser?.close();
  await docs?.close();
  await stopLoginEnv(env);
});

/**
 * One run of the MCP authorization flow with the SDK as the client; returns the access token.
 * The example server checks tokens by `tokenCheck`.
 */
export async function mcpRun(
  t: ExecutionContext,
  variant: ProviderVariant,
  tokenCheck: 'introspection' | 'jwt' = 'introspection',
): Promise<string> {
  const server = await startMcpServer({
    issuer: env.d.url,
    resource: mcpUrl,
    port,
    tokenCheck,
    clientId: rs.clientId,
    clientSecret: rs.secret,
  });
  try {
    return await flow(t, variant);
  } finally {
    await server.close();
  }
}

async function flow(t: ExecutionContext, variant: ProviderVariant): Promise<string> {
  const provider = new TestProvider(variant);

  // 1. No token: the server's 401 names the hosted metadata; the SDK discovers and redirects.
  const first = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.is(first.status, 401);
  const hosted = `${env.d.url}/resource-metadata/${rs.clientId}`;
  t.is(first.headers.get('www-authenticate'), `Bearer resource_metadata="${hosted}"`);
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
  await t.throwsAsync(client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider })), {
    instanceOf: UnauthorizedError,
  });
  const authz = provider.authorizationUrl!;
  t.truthy(authz, 'the SDK asked for the user agent to be sent to /authorize');
  t.is(`${authz.origin}${authz.pathname}`, `${env.d.url}/authorize`, 'from the AS metadata the hosted document names');
  t.is(authz.searchParams.get('resource'), mcpUrl, 'RFC 8707 resource');
  t.is(authz.searchParams.get('code_challenge_method'), 'S256');
  t.is(authz.searchParams.get('scope'), 'openid email', 'scopes_supported of the hosted document');
  if (variant.clientInformation) t.is(authz.searchParams.get('client_id'), variant.clientInformation.client_id);
  // A client ID metadata document: the SDK names itself by the document's URL, registering nothing.
  if (variant.clientMetadataUrl) t.is(authz.searchParams.get('client_id'), variant.clientMetadataUrl);

  // 2. The login page in Chromium: email, the mailed code, back to the redirect URI with a code.
  const { page } = await newPage(t, browser);
  const callback = interceptCallback(page);
  await page.goto(authz.href);
  const earlier = new Set(env.sink.messages);
  await page.getByLabel('Email address').fill(env.app.user.email);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(env.app.user.email), 15_000);
  await page.getByLabel('Sign-in code').fill(codeFrom(mail.text));
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (!variant.clientInformation) {
    // A self-registered client is third-party: the consent page says what it stated is
    // unverified, where the answer goes, and for a document client the document's host.
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const consent = await page.content();
    t.true(consent.includes('Provided by the app, not verified'), 'unverified metadata marked');
    t.true(consent.includes('you will be sent to <strong>rp.example.test</strong>'), 'the redirect host');
    if (variant.clientMetadataUrl)
      t.true(consent.includes(`its document at <strong>${new URL(variant.clientMetadataUrl).host}</strong>`));
    await page.getByRole('button', { name: 'Allow' }).click();
  }
  const cb = await withTimeout(callback, 20_000, 'redirect to the MCP client');
  t.is(cb.searchParams.get('iss'), env.d.url, 'RFC 9207 iss');
  t.is(cb.searchParams.get('state'), 'mcp-state');
  const code = cb.searchParams.get('code');
  t.truthy(code, cb.href);

  // 3. The SDK exchanges the code (PKCE verifier, resource), then calls the tool with the token.
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await transport.finishAuth(code!);
  const accessToken = provider.saved!.access_token;
  t.deepEqual([decodeJwt(accessToken).aud].flat(), [mcpUrl], 'audience-bound to the MCP server alone');
  const connected = new Client({ name: 'mcp-e2e', version: '1.0.0' });
  await connected.connect(transport);
  const result = await connected.callTool({ name: 'whoami', arguments: {} });
  const text = (result.content as { type: string; text: string }[])[0].text;
  const who = JSON.parse(text) as { sub: string; scope: string };
  t.is(who.sub, env.app.user.id);
  t.is(who.scope, 'openid email');
  await connected.close();
  return accessToken;
}

test.serial(
  'MCP SDK client, pre-registered: 401 → hosted metadata → login in Chromium → token → tool call',
  async (t) => {
    const token = await mcpRun(t, {
      name: 'pre-registered',
      clientInformation: { client_id: preRegistered.clientId, client_secret: preRegistered.secret },
    });
    // The same token against the server in JWT mode (signature, issuer, aud = its URL).
    const jwtServer = await startMcpServer({
      issuer: env.d.url,
      resource: mcpUrl,
      port,
      tokenCheck: 'jwt',
      clientId: rs.clientId,
    });
    t.teardown(() => jwtServer.close());
    // node:http without keep-alive: the global fetch's pool may hold a socket of the server closed above.
    const call = (bearer: string) =>
      new Promise<{ status: number; text: string; challenge: string }>((resolve, reject) => {
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'whoami', arguments: {} },
        });
        const req = request(
          mcpUrl,
          {
            method: 'POST',
            agent: false,
            headers: {
              authorization: `Bearer ${bearer}`,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, text, challenge: String(res.headers['www-authenticate'] ?? '') }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const ok = await call(token);
    t.is(ok.status, 200);
    t.regex(ok.text, new RegExp(env.app.user.id));
    // A token of this service for another audience: refused with invalid_token (no passthrough, RFC 8707).
    const other = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
    const refused = await call(other);
    t.is(refused.status, 401);
    t.regex(refused.challenge, /^Bearer error="invalid_token", .*resource_metadata="/);
  },
);

/** The AS metadata's client_id_metadata_document_supported, as the SDK reads it. */
async function documentsSupported(): Promise<unknown> {
  const r = await fetch(`${env.d.url}/.well-known/oauth-authorization-server`);
  return ((await r.json()) as Record<string, unknown>).client_id_metadata_document_supported;
}

test.serial(
  'MCP SDK client, dynamic registration while documents are off: 401 → metadata → RFC 7591 → consent → tool call',
  async (t) => {
    t.not(await documentsSupported(), true, 'no tenant accepts client ID metadata documents yet');
    const variant: ProviderVariant = { name: 'dynamic registration' };
    const token = await mcpRun(t, variant);
    const clientId = String(decodeJwt(token).client_id);
    t.notDeepEqual([clientId], [preRegistered.clientId]);
    // The client the SDK registered, in the default tenant, marked as dynamically registered.
    const shown = await api(env.d.url, 'GET', `/api/admin/tenants/${env.app.tenantId}/clients/${clientId}`, {
      token: platformAdmin,
    });
    t.is(shown.status, 200, shown.text);
    t.is((shown.body as { registered_via?: string }).registered_via, 'dynamic');
  },
);

test.serial(
  'MCP SDK client, client ID metadata document: 401 → metadata → the URL as client_id → consent → token → tool call',
  async (t) => {
    const put = await api(env.d.url, 'PUT', `/api/admin/tenants/${env.app.tenantId}/client-metadata-documents`, {
      token: platformAdmin,
      body: { enabled: true },
    });
    t.is(put.status, 200, put.text);
    t.is(await documentsSupported(), true);
    const token = await mcpRun(t, { name: 'client ID metadata document', clientMetadataUrl: documentUrl });
    t.is(decodeJwt(token).client_id, documentUrl, 'the token names the document URL as its client');
    t.is(docs.hits['/mcp-client.json'], 1, 'fetched once, then served from the cache');
  },
);
