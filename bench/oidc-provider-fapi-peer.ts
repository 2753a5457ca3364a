/**
 * node-oidc-provider configured for FAPI 2.0 (its `fapi` feature, profile '2.0'), the peer of
 * the FAPI login benchmark (bench/login-fapi.ts): pushed authorization requests required for
 * every client (`pushedAuthorizationRequests.requirePushedAuthorizationRequests`), DPoP on and
 * required for the client (`dpop_bound_access_tokens`, RFC 9449 §5.2), one private_key_jwt
 * client whose public key the bench passes in BENCH_FAPI_CLIENT_JWK, ES256 signatures. The
 * profile itself makes it require PKCE S256, a `redirect_uri`, and the issuer as the client
 * assertion's audience. The interaction endpoints are the plain peer's
 * (bench/lib/peer-interactions.ts). Its default in-memory adapter; prints "ready <port>".
 */
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';
import { PEER_FAPI, PEER_REDIRECT } from './lib/peer.js';
import { mountInteractions } from './lib/peer-interactions.js';

/** Accounts bench0 … bench<n-1>, n from argv[3]. */
const ACCOUNTS = Number(process.argv[3] ?? 256);
const port = Number(process.argv[2] ?? 0);
const clientJwk = JSON.parse(process.env.BENCH_FAPI_CLIENT_JWK ?? 'null') as Record<string, unknown> | null;
if (!clientJwk) throw new Error('BENCH_FAPI_CLIENT_JWK: the client’s public key is required');

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const accounts = new Map<string, { email: string }>();
for (let i = 0; i < ACCOUNTS; i++) accounts.set(`bench${i}`, { email: `bench${i}@bench.test` });

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: PEER_FAPI.id,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [PEER_REDIRECT],
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks: { keys: [clientJwk] },
      id_token_signed_response_alg: 'ES256',
      dpop_bound_access_tokens: true,
    },
  ],
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'bench', use: 'sig', alg: 'ES256' }] },
  cookies: { keys: ['bench-cookie-key-0123456789abcdef0123'] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  findAccount: (_ctx: unknown, id: string) => {
    const a = accounts.get(id);
    return a ? { accountId: id, claims: () => ({ sub: id, email: a.email, email_verified: true }) } : undefined;
  },
  interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  pkce: { required: () => true },
  // FAPI 2.0 Security Profile §5.4: PS256, ES256 or EdDSA only.
  enabledJWA: {
    clientAuthSigningAlgValues: ['ES256', 'PS256', 'EdDSA'],
    idTokenSigningAlgValues: ['ES256', 'PS256', 'EdDSA'],
    dPoPSigningAlgValues: ['ES256', 'PS256', 'EdDSA'],
  },
  features: {
    fapi: { enabled: true, profile: '2.0' },
    pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: true },
    dPoP: { enabled: true },
    devInteractions: { enabled: false },
  },
});

mountInteractions(provider, accounts);

const server = provider.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  console.log(`ready ${typeof addr === 'object' && addr ? addr.port : port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
