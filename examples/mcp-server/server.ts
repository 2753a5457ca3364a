/**
 * An MCP server (Streamable HTTP, the official TypeScript SDK) protected by this identity
 * service, as the MCP authorization specification asks (docs/mcp.md):
 *
 * - without a valid access token it answers 401 with
 *   `WWW-Authenticate: Bearer resource_metadata="<hosted URL>"` (RFC 9728 §5.1), adding
 *   `error="invalid_token"` when a token was sent but refused (RFC 6750 §3.1);
 * - its protected resource metadata is hosted by the service (`PUT …/resource-metadata`),
 *   at `{issuer}/resource-metadata/{client_id}`;
 * - it accepts only tokens issued for it (audience = its own URL, RFC 8707), checked by
 *   introspection (RFC 7662, as a resource-server client with strict introspection: revoked
 *   tokens stop at once) or by verifying the JWT against the service's JWKS (no call per
 *   request; a revoked token lives until it expires);
 * - it never passes the token on to anyone (no token passthrough);
 * - it has one tool, `whoami`, answering the token's subject and scope.
 *
 * Run it (after `npm run build`): `node dist/examples/mcp-server/server.js`, configured by the
 * environment variables in README.md. Tests import startMcpServer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';

export interface McpServerConfig {
  /** The identity service's issuer identifier (its base URL). */
  issuer: string;
  /** This server's MCP endpoint URL: its resource identifier, the `aud` its tokens must carry. */
  resource: string;
  /** The port to listen on, on 127.0.0.1 (0: any). */
  port: number;
  /** How tokens are checked: `introspection` (the default) or `jwt`. */
  tokenCheck: 'introspection' | 'jwt';
  /** The resource server's client at the identity service (introspection's Basic credentials). */
  clientId: string;
  clientSecret?: string;
  /** Where the metadata is hosted; defaults to `{issuer}/resource-metadata/{clientId}`. */
  resourceMetadataUrl?: string;
}

/** Why a request is refused: no token at all, or one that is not good here. */
class Unauthorized extends Error {
  constructor(
    readonly tokenSent: boolean,
    message: string,
  ) {
    super(message);
  }
}

type TokenChecker = (token: string) => Promise<AuthInfo>;

/** RFC 7662: the service says whether the token is active; strict introspection checks the audience too. */
function introspection(c: McpServerConfig): TokenChecker {
  const basic =
    'Basic ' +
    Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret ?? '')}`).toString('base64');
  return async (token) => {
    const res = await fetch(`${c.issuer}/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({ token }),
    });
    if (res.status !== 200) throw new Error(`introspection answered ${res.status}`);
    const r = (await res.json()) as {
      active?: boolean;
      sub?: string;
      scope?: string;
      client_id?: string;
      aud?: unknown;
      exp?: number;
    };
    // Defence in depth beside strict introspection: the token must name this server (RFC 8707).
    if (!r.active || ![r.aud].flat().includes(c.resource))
      throw new Unauthorized(true, 'The token is not active here.');
    return authInfo(token, r);
  };
}

/** RFC 9068-style verification: the service's signature, its issuer, and this server as `aud`. */
function jwt(c: McpServerConfig): TokenChecker {
  const keys = createRemoteJWKSet(new URL(`${c.issuer}/jwks`));
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keys, { issuer: c.issuer, audience: c.resource });
      return authInfo(token, payload);
    } catch {
      throw new Unauthorized(true, 'The token is not valid here.');
    }
  };
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function authInfo(token: string, claims: Record<string, unknown>): AuthInfo {
  return {
    token,
    clientId: str(claims.client_id) ?? str(claims.azp) ?? '',
    scopes: (str(claims.scope) ?? '').split(' ').filter(Boolean),
    ...(typeof claims.exp === 'number' ? { expiresAt: claims.exp } : {}),
    extra: { sub: claims.sub },
  };
}

/** The MCP server of one request (stateless Streamable HTTP): the `whoami` tool. */
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'example-protected-mcp-server', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: "The access token's subject and scope, as this server checked them" },
    (extra) => {
      const who = {
        sub: extra.authInfo?.extra?.sub,
        scope: extra.authInfo?.scopes.join(' '),
        client_id: extra.authInfo?.clientId,
      };
      return { content: [{ type: 'text', text: JSON.stringify(who) }] };
    },
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startMcpServer(
  c: McpServerConfig,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const check = c.tokenCheck === 'jwt' ? jwt(c) : introspection(c);
  const metadataUrl = c.resourceMetadataUrl ?? `${c.issuer}/resource-metadata/${encodeURIComponent(c.clientId)}`;
  const path = new URL(c.resource).pathname;

  const refuse = (res: ServerResponse, e: Unauthorized) => {
    // RFC 9728 §5.1 and RFC 6750 §3: where to learn how to get a token; why this one was refused.
    const params = e.tokenSent ? `error="invalid_token", error_description="${e.message}", ` : '';
    res.writeHead(401, {
      'content-type': 'application/json',
      'www-authenticate': `Bearer ${params}resource_metadata="${metadataUrl}"`,
    });
    res.end(JSON.stringify({ error: e.tokenSent ? 'invalid_token' : 'unauthorized', error_description: e.message }));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // Browser-based MCP clients read the challenge across origins.
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-expose-headers', 'www-authenticate, mcp-session-id');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST, DELETE',
        'access-control-allow-headers': 'authorization, content-type, mcp-protocol-version, mcp-session-id',
      });
      return res.end();
    }
    if (new URL(req.url ?? '/', 'http://x').pathname !== path) {
      res.writeHead(404).end();
      return;
    }
    const m = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(req.headers.authorization ?? '');
    let auth: AuthInfo;
    try {
      if (!m) throw new Unauthorized(false, 'An access token for this server is required.');
      auth = await check(m[1]);
    } catch (e) {
      if (e instanceof Unauthorized) return refuse(res, e);
      throw e;
    }
    if (req.method !== 'POST') {
      // Stateless: no server-initiated stream, no session to end.
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(Object.assign(req, { auth }), res, await readJson(req));
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'server_error', error_description: String((e as Error).message) }));
    });
  });
  await new Promise<void>((resolve) => http.listen(c.port, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    server: http,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

/** Run directly: configured by the environment (README.md). */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  const need = (name: string) => {
    const v = env[name];
    if (!v) throw new Error(`${name} is required (examples/mcp-server/README.md)`);
    return v;
  };
  const config: McpServerConfig = {
    issuer: need('IAM_ISSUER').replace(/\/$/, ''),
    resource: need('MCP_RESOURCE'),
    port: Number(env.PORT || new URL(need('MCP_RESOURCE')).port || 3000),
    tokenCheck: env.MCP_TOKEN_CHECK === 'jwt' ? 'jwt' : 'introspection',
    clientId: need('MCP_CLIENT_ID'),
    clientSecret: env.MCP_CLIENT_SECRET,
    ...(env.MCP_RESOURCE_METADATA_URL ? { resourceMetadataUrl: env.MCP_RESOURCE_METADATA_URL } : {}),
  };
  startMcpServer(config).then(
    (s) => console.log(`MCP server listening at ${s.url} (tokens checked by ${config.tokenCheck})`),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
