/**
 * node-oidc-provider 9 as the comparison peer for the client_credentials benchmark
 * (bench/client-credentials.ts): the client_credentials grant issuing JWT access tokens signed
 * with ES256, as our token endpoint does, through its resource indicators feature (RFC 8707;
 * node-oidc-provider issues JWT access tokens only for a resource server), every token for the
 * one resource server `https://api.bench.test`. Its default in-memory adapter; one process,
 * which prints "ready <port>" when it listens. The introspection peer (oidc-provider-peer.ts)
 * stays as it is: it issues opaque tokens, the only ones node-oidc-provider introspects.
 */
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';

const port = Number(process.argv[2] ?? 0);
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: 'bench-es256', alg: 'ES256', use: 'sig' };
const RESOURCE = 'https://api.bench.test';

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: 'bench-app',
      client_secret: 'bench-app-secret-0123456789abcdef',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      // Its only key is the ES256 one; the RS256 default would be refused.
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [jwk] },
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      getResourceServerInfo: () => ({
        scope: 'api',
        audience: RESOURCE,
        accessTokenTTL: 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  scopes: ['api'],
});
const server = provider.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  console.log(`ready ${typeof addr === 'object' && addr ? addr.port : port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
