/**
 * node-oidc-provider as the comparison peer for the introspection benchmark: its default
 * in-memory adapter, opaque access tokens (it refuses to introspect JWT access tokens), the
 * client_credentials grant and the introspection endpoint. Runs as its own process, like our
 * daemon, and prints "ready <port>" when it listens.
 */
import Provider from 'oidc-provider';

const port = Number(process.argv[2] ?? 0);
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: 'bench-rs',
      client_secret: 'bench-rs-secret-0123456789abcdef',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    devInteractions: { enabled: false },
  },
  scopes: ['api'],
});
const server = provider.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  console.log(`ready ${typeof addr === 'object' && addr ? addr.port : port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
