/**
 * `iam clients create --jwks-file` and `--jwks-uri`: private_key_jwt clients (RFC 7523)
 * registered by an operator, then authenticated by the daemon with a signed client assertion;
 * invalid keys and a non-https URL are refused naming the flag. The real executable.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { exportJWK, SignJWT } from 'jose';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { startDaemon } from '../helpers/daemon.js';
import { newKey, startIssuer, type SigningKey } from '../helpers/https-issuer.js';

interface Created {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: string;
  jwks: { keys: unknown[] } | null;
  jwks_uri: string | null;
}

async function clientCredentials(base: string, clientId: string, key: SigningKey) {
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(base)
    .setJti(randomBytes(12).toString('base64url'))
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .sign(key.privateKey);
  const res = await fetch(`${base}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    }),
  });
  return res.status;
}

test('clients create --jwks-file and --jwks-uri register private_key_jwt clients the daemon authenticates', async (t) => {
  const db = await testDatabase(t);
  const dir = mkdtempSync(join(tmpdir(), 'iam-jwks-'));
  const idp = await startIssuer();
  t.teardown(async () => {
    rmSync(dir, { recursive: true, force: true });
    await idp.close();
  });
  await iamJson(db, ['db', 'migrate']);
  const tenant = await iamJson<{ id: string }>(db, ['tenants', 'create', '--name', 'Keys']);
  const base = ['clients', 'create', '--tenant', tenant.id, '--grant-type', 'client_credentials', '--scope', 'api'];

  const key = await newKey('file-key');
  const file = join(dir, 'public.jwks.json');
  writeFileSync(file, JSON.stringify({ keys: [key.publicJwk] }));
  const inline = await iamJson<Created>(db, [...base, '--name', 'File', '--jwks-file', file]);
  t.is(inline.token_endpoint_auth_method, 'private_key_jwt');
  t.is(inline.jwks?.keys.length, 1);
  t.is(inline.client_secret, undefined, 'a private_key_jwt client gets no secret');

  const remote = await iamJson<Created>(db, [...base, '--name', 'Url', '--jwks-uri', `${idp.issuer}/jwks`]);
  t.is(remote.token_endpoint_auth_method, 'private_key_jwt');
  t.is(remote.jwks_uri, `${idp.issuer}/jwks`);

  // Refusals, each naming its flag: a private key in the file, a plain-http URL, both sources.
  const priv = join(dir, 'private.jwks.json');
  writeFileSync(priv, JSON.stringify({ keys: [{ ...(await exportJWK(key.privateKey)), kid: 'p' }] }));
  const leaked = await iam(db, [...base, '--name', 'Bad', '--jwks-file', priv]);
  t.is(leaked.code, 1);
  t.regex(leaked.stderr, /invalid --jwks-file.*public keys only/);
  const http = await iam(db, [...base, '--name', 'Bad', '--jwks-uri', 'http://keys.example.com/jwks']);
  t.is(http.code, 1);
  t.regex(http.stderr, /invalid --jwks-uri.*https/);
  const secretWithKeys = await iam(db, [
    ...base,
    '--name',
    'Bad',
    '--jwks-file',
    file,
    '--auth-method',
    'client_secret_basic',
  ]);
  t.is(secretWithKeys.code, 1);
  t.regex(secretWithKeys.stderr, /keys are registered only for private_key_jwt/);

  const d = await startDaemon(db.url, db.dir, {
    IAM_OUTBOUND_ALLOW_LOOPBACK: 'true',
    IAM_OUTBOUND_CA_FILE: idp.cert.certFile,
  });
  try {
    t.is(await clientCredentials(d.url, inline.client_id, key), 200);
    t.is(await clientCredentials(d.url, remote.client_id, idp.published[0]), 200);
    t.is(await clientCredentials(d.url, remote.client_id, key), 401, 'a key the URL does not serve');
  } finally {
    await d.stop();
  }
});
