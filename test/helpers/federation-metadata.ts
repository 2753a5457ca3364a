/* eslint-disable max-len -- SAML metadata fixtures read best with one element per line */
/**
 * Signed SAML metadata aggregates for the federation tests and the bench: N EntityDescriptors
 * (roles, registration authority, entity categories, SIRTFI, hide-from-discovery) inside one
 * EntitiesDescriptor, signed with xml-crypto (RSA-SHA256, exclusive c14n, enveloped, the
 * Signature as the root's first child as SAML metadata places it), and a real HTTPS server on
 * loopback that serves them with ETag / Last-Modified and answers 304 to a matching
 * conditional GET.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignedXml } from 'xml-crypto';
import { makeCert, type TestCert } from './https-issuer.js';

export interface MetadataSigner {
  keyPem: string;
  certPem: string;
  /** SHA-256 of the DER certificate, lower-case hex. */
  fingerprint: string;
}

/** An RSA-2048 key and a self-signed certificate for it (openssl CLI, as makeCert). */
export function makeSigner(): MetadataSigner {
  const dir = mkdtempSync(join(tmpdir(), 'iam-md-signer-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '30',
        '-subj',
        '/CN=test-federation-signer',
      ],
      { stdio: 'pipe' },
    );
    const certPem = readFileSync(certFile, 'utf8');
    return {
      keyPem: readFileSync(keyFile, 'utf8'),
      certPem,
      fingerprint: createHash('sha256').update(new X509Certificate(certPem).raw).digest('hex'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface EntitySpec {
  entityId: string;
  roles?: ('saml_idp' | 'saml_sp')[];
  registrationAuthority?: string;
  categories?: string[];
  categorySupport?: string[];
  hideFromDiscovery?: boolean;
  sirtfi?: boolean;
}

export const RS = 'http://refeds.org/category/research-and-scholarship';
export const HIDE = 'http://refeds.org/category/hide-from-discovery';
export const SIRTFI = 'https://refeds.org/sirtfi';

export interface AggregateOptions {
  entities: EntitySpec[];
  signer?: MetadataSigner;
  /** ISO date-time; default 10 days ahead. null leaves the attribute out. */
  validUntil?: string | null;
  cacheDuration?: string;
  /** Filler text per entity (bytes), to reach a target size in the bench. */
  padding?: number;
  /** Certificate embedded in each role's KeyDescriptor (base64 DER); default a fixed filler. */
  roleCertB64?: string;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

function entityXml(e: EntitySpec, certB64: string, padding: number): string {
  const attrs: string[] = [];
  const cats = [...(e.categories ?? []), ...(e.hideFromDiscovery ? [HIDE] : [])];
  if (cats.length)
    attrs.push(
      `<saml:Attribute Name="http://macedir.org/entity-category" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri">${cats.map((c) => `<saml:AttributeValue>${esc(c)}</saml:AttributeValue>`).join('')}</saml:Attribute>`,
    );
  if (e.categorySupport?.length)
    attrs.push(
      `<saml:Attribute Name="http://macedir.org/entity-category-support" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri">${e.categorySupport.map((c) => `<saml:AttributeValue>${esc(c)}</saml:AttributeValue>`).join('')}</saml:Attribute>`,
    );
  if (e.sirtfi)
    attrs.push(
      `<saml:Attribute Name="urn:oasis:names:tc:SAML:attribute:assurance-certification" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri"><saml:AttributeValue>${SIRTFI}</saml:AttributeValue></saml:Attribute>`,
    );
  const ext =
    `<md:Extensions>` +
    (e.registrationAuthority
      ? `<mdrpi:RegistrationInfo registrationAuthority="${esc(e.registrationAuthority)}" registrationInstant="2024-01-01T00:00:00Z"/>`
      : '') +
    (attrs.length ? `<mdattr:EntityAttributes>${attrs.join('')}</mdattr:EntityAttributes>` : '') +
    `</md:Extensions>`;
  const key = `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certB64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
  const pad =
    padding > 0
      ? `<md:Organization><md:OrganizationName xml:lang="en">${'x'.repeat(padding)}</md:OrganizationName><md:OrganizationDisplayName xml:lang="en">Org</md:OrganizationDisplayName><md:OrganizationURL xml:lang="en">https://example.org/</md:OrganizationURL></md:Organization>`
      : '';
  const roles = (e.roles ?? ['saml_idp'])
    .map((r) =>
      r === 'saml_idp'
        ? `<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${key}<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${esc(e.entityId)}/sso"/></md:IDPSSODescriptor>`
        : `<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${key}<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${esc(e.entityId)}/acs" index="0"/></md:SPSSODescriptor>`,
    )
    .join('');
  return `<md:EntityDescriptor entityID="${esc(e.entityId)}">${ext}${roles}${pad}</md:EntityDescriptor>`;
}

/** The unsigned aggregate. */
export function aggregateXml(o: AggregateOptions): string {
  const validUntil = o.validUntil === undefined ? new Date(Date.now() + 10 * 86_400_000).toISOString() : o.validUntil;
  const cert = o.roleCertB64 ?? Buffer.from(randomBytes(900)).toString('base64');
  const head =
    `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#"` +
    ` xmlns:mdrpi="urn:oasis:names:tc:SAML:metadata:rpi" xmlns:mdattr="urn:oasis:names:tc:SAML:metadata:attribute"` +
    ` xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_agg${randomBytes(8).toString('hex')}" Name="urn:test:federation"` +
    (validUntil ? ` validUntil="${validUntil}"` : '') +
    (o.cacheDuration ? ` cacheDuration="${o.cacheDuration}"` : '') +
    `>`;
  const body = o.entities.map((e) => entityXml(e, cert, o.padding ?? 0)).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n${head}\n${body}\n</md:EntitiesDescriptor>\n`;
}

/** Signs `xml` (whose root carries an ID) enveloped, the Signature as the root's first child. */
export function signXml(xml: string, signer: MetadataSigner): string {
  const sig = new SignedXml({
    privateKey: signer.keyPem,
    publicCert: signer.certPem,
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  });
  sig.addReference({
    xpath: '/*',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  sig.computeSignature(xml, { prefix: 'ds', location: { reference: '/*', action: 'prepend' } });
  return sig.getSignedXml();
}

export function signedAggregate(o: AggregateOptions & { signer: MetadataSigner }): string {
  return signXml(aggregateXml(o), o.signer);
}

/** `n` entities with a mix of roles, authorities and categories, for volume. */
export function manyEntities(n: number, prefix = 'https://e'): EntitySpec[] {
  return Array.from({ length: n }, (_, i) => ({
    entityId: `${prefix}${i}.example.org/idp`,
    roles: i % 3 === 0 ? ['saml_sp'] : i % 7 === 0 ? ['saml_idp', 'saml_sp'] : ['saml_idp'],
    registrationAuthority: `https://ra${i % 5}.example.org/`,
    categories: i % 4 === 0 ? [RS] : [],
    sirtfi: i % 6 === 0,
    hideFromDiscovery: i % 50 === 0,
  }));
}

export interface MetadataServer {
  /** https://127.0.0.1:<port> */
  base: string;
  cert: TestCert;
  /**
   * Sets the document served at `path` (a new ETag and Last-Modified), or a status to answer,
   * or `drip`: a 200 whose body is one byte every `drip` ms, never finished (a slow-loris
   * publisher that stays just inside an idle timeout).
   */
  set(path: string, body: string | Buffer | { status: number } | { drip: number }): void;
  /** Ends every dripping response still open (its body stops short: not well-formed XML). */
  endDrips(): void;
  /** What the server saw, in order: each request's arrival and each dripping response's end. */
  events: { path: string; event: 'request' | 'drip_closed' }[];
  /** Requests by path, and how many were answered 304. */
  hits: Record<string, number>;
  notModified: Record<string, number>;
  /** Conditional headers of the last request per path. */
  lastConditional: Record<string, { ifNoneMatch?: string; ifModifiedSince?: string }>;
  close(): Promise<void>;
}

export async function startMetadataServer(): Promise<MetadataServer> {
  const cert = makeCert();
  const docs = new Map<
    string,
    { body: Buffer; etag: string; lastModified: string } | { status: number } | { drip: number }
  >();
  const events: MetadataServer['events'] = [];
  const drips = new Set<() => void>();
  const hits: Record<string, number> = {};
  const notModified: Record<string, number> = {};
  const lastConditional: MetadataServer['lastConditional'] = {};
  let version = 0;
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    hits[path] = (hits[path] ?? 0) + 1;
    events.push({ path, event: 'request' });
    const inm = req.headers['if-none-match'];
    const ims = req.headers['if-modified-since'];
    lastConditional[path] = { ifNoneMatch: inm, ifModifiedSince: ims };
    const doc = docs.get(path);
    if (!doc) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    if ('drip' in doc) {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' });
      res.write('<');
      const timer = setInterval(() => res.write(' '), doc.drip);
      const end = () => {
        clearInterval(timer);
        res.end();
      };
      drips.add(end);
      res.on('close', () => {
        clearInterval(timer);
        drips.delete(end);
        events.push({ path, event: 'drip_closed' });
      });
      return;
    }
    if ('status' in doc) {
      res.writeHead(doc.status, { 'content-type': 'text/plain' });
      return res.end('refused');
    }
    if (inm !== undefined ? inm === doc.etag : ims !== undefined && ims === doc.lastModified) {
      notModified[path] = (notModified[path] ?? 0) + 1;
      res.writeHead(304, { etag: doc.etag, 'last-modified': doc.lastModified });
      return res.end();
    }
    res.writeHead(200, {
      'content-type': 'application/samlmetadata+xml',
      'content-length': doc.body.length,
      etag: doc.etag,
      'last-modified': doc.lastModified,
    });
    res.end(doc.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    cert,
    hits,
    notModified,
    lastConditional,
    events,
    endDrips() {
      for (const end of [...drips]) end();
    },
    set(path, body) {
      if (typeof body === 'object' && !Buffer.isBuffer(body)) return void docs.set(path, body);
      const buf = Buffer.isBuffer(body) ? body : Buffer.from(body);
      version += 1;
      docs.set(path, {
        body: buf,
        etag: `"v${version}-${createHash('sha256').update(buf).digest('hex').slice(0, 16)}"`,
        // Distinct per version even within one second: tests that use only If-Modified-Since
        // compare the exact string, as the server does.
        lastModified: new Date(Date.UTC(2026, 0, 1, 0, 0, version)).toUTCString(),
      });
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(cert.dir, { recursive: true, force: true });
    },
  };
}
