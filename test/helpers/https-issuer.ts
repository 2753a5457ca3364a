/**
 * A real HTTPS identity provider on loopback for ID-JAG tests: a self-signed certificate made
 * with the `openssl` CLI at test time (valid for 127.0.0.1, ::1 and localhost), discovery
 * metadata, a JWK Set, and ES256 signing of ID-JAGs with jose. Counts every request by path,
 * so tests can tell whether the daemon fetched anything.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface TestCert {
  dir: string;
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

/** A throwaway self-signed certificate; needs the openssl CLI (Debian: package openssl). */
export function makeCert(): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'iam-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '2',
        '-subj',
        '/CN=iam-test-issuer',
        '-addext',
        'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost',
      ],
      { stdio: 'pipe' },
    );
  } catch (e) {
    throw new Error(
      `could not create a test certificate with the openssl CLI (is openssl installed?): ${(e as Error).message}`,
      { cause: e },
    );
  }
  return { dir, certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function newKey(kid = `k-${randomBytes(4).toString('hex')}`): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

export interface IdJagInput {
  clientId: string;
  audience: string;
  sub?: string;
  jti?: string;
  iat?: number;
  exp?: number;
  scope?: string;
  resource?: string | string[];
  tenant?: string;
  /** Overrides the issuer claim (default: this issuer). */
  iss?: string;
  typ?: string;
  /** Signing key (default: the first published key). */
  key?: SigningKey;
  extra?: Record<string, unknown>;
}

export interface TestIssuer {
  /** The issuer identifier, https://127.0.0.1:<port> */
  issuer: string;
  cert: TestCert;
  /** Requests by path. */
  hits: Record<string, number>;
  /** Keys served at /jwks. */
  published: SigningKey[];
  sign(p: IdJagInput): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the issuer. `discovery: 'oidc'` serves /.well-known/openid-configuration; 'oauth'
 * serves only RFC 8414's /.well-known/oauth-authorization-server (the other answers 404).
 */
export async function startIssuer(opts: { cert?: TestCert; discovery?: 'oidc' | 'oauth' } = {}): Promise<TestIssuer> {
  const cert = opts.cert ?? makeCert();
  const hits: Record<string, number> = {};
  const published: SigningKey[] = [await newKey()];
  let issuer = '';
  const json = (res: import('node:http').ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    hits[path] = (hits[path] ?? 0) + 1;
    const metadata = {
      issuer,
      jwks_uri: `${issuer}/jwks`,
      token_endpoint: `${issuer}/token`,
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:token-exchange'],
    };
    if (path === '/.well-known/openid-configuration' && (opts.discovery ?? 'oidc') === 'oidc')
      return json(res, metadata);
    if (path === '/.well-known/oauth-authorization-server' && opts.discovery === 'oauth') return json(res, metadata);
    if (path === '/jwks') return json(res, { keys: published.map((k) => k.publicJwk) });
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not_found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const sign = async (p: IdJagInput) => {
    const now = Math.floor(Date.now() / 1000);
    const key = p.key ?? published[0];
    return new SignJWT({
      client_id: p.clientId,
      ...(p.scope !== undefined ? { scope: p.scope } : {}),
      ...(p.resource !== undefined ? { resource: p.resource } : {}),
      ...(p.tenant !== undefined ? { tenant: p.tenant } : {}),
      ...(p.extra ?? {}),
    })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: p.typ ?? 'oauth-id-jag+jwt' })
      .setIssuer(p.iss ?? issuer)
      .setSubject(p.sub ?? 'U019488227')
      .setAudience(p.audience)
      .setJti(p.jti ?? randomBytes(12).toString('base64url'))
      .setIssuedAt(p.iat ?? now)
      .setExpirationTime(p.exp ?? now + 300)
      .sign(key.privateKey);
  };

  return {
    issuer,
    cert,
    hits,
    published,
    sign,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!opts.cert) rmSync(cert.dir, { recursive: true, force: true });
    },
  };
}
