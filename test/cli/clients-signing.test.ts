/**
 * `iam clients create --id-token-alg/--access-token-alg/--userinfo-alg` and `--no-pkce`, and
 * `--authorization-alg/--introspection-alg` (docs/jarm.md) on create and update
 * (docs/oauth.md, "Signing algorithms" and "PKCE"): stored as registered; an algorithm outside
 * RS256, PS256, ES256, EdDSA and --no-pkce on a --public client are refused naming the flag.
 * The real executable.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';

interface Created {
  client_type: string;
  id_token_signed_response_alg: string | null;
  access_token_signed_response_alg: string | null;
  userinfo_signed_response_alg: string | null;
  authorization_signed_response_alg: string | null;
  introspection_signed_response_alg: string | null;
  require_pkce: boolean;
  client_id: string;
}

test('clients create takes the signing algorithms and --no-pkce; a public client cannot turn PKCE off', async (t) => {
  const db = await testDatabase(t);
  await iamJson(db, ['db', 'migrate']);
  const tenant = await iamJson<{ id: string }>(db, ['tenants', 'create', '--name', 'Signing']);
  const base = [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'RP',
    '--redirect-uri',
    'https://rp.example.com/cb',
  ];

  const plain = await iamJson<Created>(db, base);
  t.like(plain, {
    id_token_signed_response_alg: null,
    access_token_signed_response_alg: null,
    userinfo_signed_response_alg: null,
    require_pkce: true,
  });

  const cert = await iamJson<Created>(db, [
    ...base,
    '--id-token-alg',
    'RS256',
    '--access-token-alg',
    'PS256',
    '--userinfo-alg',
    'EdDSA',
    '--authorization-alg',
    'PS256',
    '--introspection-alg',
    'RS256',
    '--no-pkce',
  ]);
  t.like(cert, {
    client_type: 'confidential',
    id_token_signed_response_alg: 'RS256',
    access_token_signed_response_alg: 'PS256',
    userinfo_signed_response_alg: 'EdDSA',
    authorization_signed_response_alg: 'PS256',
    introspection_signed_response_alg: 'RS256',
    require_pkce: false,
  });
  // `default` clears one; the other stays.
  const updated = await iamJson<Created>(db, [
    'clients',
    'update',
    '--tenant',
    tenant.id,
    cert.client_id,
    '--authorization-alg',
    'default',
  ]);
  t.like(updated, { authorization_signed_response_alg: null, introspection_signed_response_alg: 'RS256' });

  const pub = await iam(db, [...base, '--public', '--no-pkce']);
  t.is(pub.code, 1);
  t.regex(pub.stderr, /--no-pkce/);
  t.regex(pub.stderr, /public client always requires PKCE/);

  const hs = await iam(db, [...base, '--id-token-alg', 'HS256']);
  t.not(hs.code, 0);
  t.regex(hs.stderr, /--id-token-alg/);
});
