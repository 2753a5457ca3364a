/**
 * node-oidc-provider as the comparison peer for the introspection and login benchmarks, with
 * its default in-memory adapter. Runs as its own process, like our daemon, and prints
 * "ready <port>" when it listens.
 *
 * - Introspection: opaque access tokens (it refuses to introspect JWT access tokens), the
 *   client_credentials grant and the introspection endpoint.
 * - Login: its own authorization-code flow with PKCE, through its interaction API as its
 *   documentation shows it: devInteractions off, a login form whose POST looks the account up
 *   in a map (the trivial account lookup) and a consent form whose POST saves a Grant, each
 *   finished with `interactionResult` and a 303 back to the authorization endpoint. ID tokens
 *   are signed with ES256, as ours are.
 */
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';
import { PEER_REDIRECT, PEER_RS, PEER_WEB } from './lib/peer.js';
import { mountInteractions } from './lib/peer-interactions.js';

/** Accounts bench0 … bench<n-1>, n from argv[3]. */
const ACCOUNTS = Number(process.argv[3] ?? 256);

const port = Number(process.argv[2] ?? 0);
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const accounts = new Map<string, { email: string }>();
for (let i = 0; i < ACCOUNTS; i++) accounts.set(`bench${i}`, { email: `bench${i}@bench.test` });

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: PEER_RS.id,
      client_secret: PEER_RS.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      // The provider's only key is ES256 (below); a client left at the RS256 default is invalid.
      id_token_signed_response_alg: 'ES256',
    },
    {
      client_id: PEER_WEB.id,
      client_secret: PEER_WEB.secret,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [PEER_REDIRECT],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
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
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    devInteractions: { enabled: false },
  },
  scopes: ['api'],
});

mountInteractions(provider, accounts);

const server = provider.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  console.log(`ready ${typeof addr === 'object' && addr ? addr.port : port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
