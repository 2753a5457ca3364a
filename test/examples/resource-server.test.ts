/**
 * examples/resource-server run for real, as its README says, against a real daemon: a token for
 * its audience passes both routes (JWKS and introspection); a token for another audience, a
 * forged one and none at all are refused with 401 and a Bearer challenge (RFC 6750 §3).
 */
import test from 'ava';
import { freePort } from '../helpers/daemon.js';
import { startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { clientCredentialsToken, credentialsClient, openServices, TEST_API } from '../helpers/seed.js';
import { startExample, type Example } from '../helpers/examples.js';

const AUDIENCE = TEST_API.resource_identifiers[0];
let env: LoginEnv;
let api: Example;
let apiUrl: string;
let caller: { clientId: string; secret: string };
let stranger: { clientId: string; secret: string };

test.before(async () => {
  env = await startLoginEnv();
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  // A client that may ask for tokens for the API (RFC 8707 audience), and one that may not.
  caller = await credentialsClient(directory, env.app.tenantId, { name: 'API caller', audiences: [AUDIENCE] });
  stranger = await credentialsClient(directory, env.app.tenantId, { name: 'Other caller' });
  await ds.destroy();
  const port = await freePort();
  apiUrl = `http://localhost:${port}`;
  // env.api is the resource server registered with --resource-identifier AUDIENCE.
  api = await startExample(
    'resource-server',
    { ISSUER: env.d.url, AUDIENCE, CLIENT_ID: env.api.clientId, CLIENT_SECRET: env.api.secret, PORT: String(port) },
    /Example API on/,
  );
});
test.after.always(async () => {
  await api?.stop();
  await stopLoginEnv(env ?? {});
});

const call = (route: string, token?: string) =>
  fetch(`${apiUrl}/${route}/hello`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

test('a token for the API passes both the JWKS route and the introspection route', async (t) => {
  const token = await clientCredentialsToken(env.d.url, caller.clientId, caller.secret);
  for (const route of ['jwks', 'introspect']) {
    const r = await call(route, token);
    t.is(r.status, 200, route);
    t.like(await r.json(), { hello: caller.clientId, client_id: caller.clientId, checked_by: route });
  }
});

test('a token for another audience, a forged token and no token are refused by both routes with 401', async (t) => {
  const other = await clientCredentialsToken(env.d.url, stranger.clientId, stranger.secret);
  const good = await clientCredentialsToken(env.d.url, caller.clientId, caller.secret);
  const [h, p, s] = good.split('.');
  const forged = [
    h,
    Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'x' })).toString(
      'base64url',
    ),
    s,
  ].join('.');
  for (const route of ['jwks', 'introspect']) {
    for (const [what, token] of [
      ['other audience', other],
      ['forged', forged],
      ['none', undefined],
    ] as const) {
      const r = await call(route, token);
      t.is(r.status, 401, `${route}: ${what}`);
      t.regex(r.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/, `${route}: ${what}`);
    }
  }
});
