/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a client_id that
 * is an https URL names the JSON document at that URL, which holds the client's metadata. This
 * file checks the URL (§3) and the document (§4.1), and builds the client the rest of the
 * service works with. docs/client-metadata-documents.md explains the decisions.
 */
import type { Client, TokenEndpointAuthMethod } from '../../db/entities.js';

/**
 * The longest URL accepted as a client_id: every column that holds a client_id is
 * VARCHAR(128) (clients, consents, token families, codes…), so a longer one could not be
 * recorded. Widening them all would touch every table naming a client; a document URL of more
 * than 128 characters is rare (docs/client-metadata-documents.md, "Limits").
 */
export const MAX_DOCUMENT_URL_LENGTH = 128;

/** The largest document accepted, bytes: the draft's §6.6 recommendation (5 KiB). */
export const MAX_DOCUMENT_BYTES = 5 * 1024;

/**
 * Whether a client_id is meant as a metadata document URL: anything with a URL scheme (a
 * registered client_id is a random token, which never has one), so that `http://…` is refused
 * with the reason rather than as an unknown client. Cheap, no checks.
 */
export function isDocumentClientId(clientId: string): boolean {
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(clientId);
}

/**
 * Why `clientId` is not an acceptable document URL (§3: https, a path, no fragment, no
 * credentials, no dot segments), or undefined when it is. The query is allowed by the draft
 * (SHOULD NOT): it is refused here too, so two URLs that differ only by it are not two clients.
 */
export function documentUrlRefusal(clientId: string): string | undefined {
  if (clientId.length > MAX_DOCUMENT_URL_LENGTH)
    return `A metadata document URL may have at most ${MAX_DOCUMENT_URL_LENGTH} characters.`;
  let u: URL;
  try {
    u = new URL(clientId);
  } catch {
    return 'The client_id is not a valid URL.';
  }
  if (u.protocol !== 'https:') return 'A metadata document client_id must be an https URL.';
  if (u.username || u.password) return 'A metadata document URL must not contain credentials.';
  if (clientId.includes('#')) return 'A metadata document URL must not contain a fragment.';
  if (u.search || clientId.includes('?')) return 'A metadata document URL must not contain a query.';
  // The URL parser removes dot segments; the raw text must not have had any (§3).
  if (/\/\.{1,2}(\/|$)/.test(clientId)) return 'A metadata document URL must not contain . or .. path segments.';
  if (u.pathname === '/' || u.pathname === '') return 'A metadata document URL must have a path.';
  if (u.toString() !== clientId) return 'A metadata document URL must be in normalised form.';
  return undefined;
}

/** What a valid document gives: the fields this service reads. */
export interface ClientDocument {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  grant_types: string[];
  token_endpoint_auth_method: 'none' | 'private_key_jwt';
  jwks: { keys: object[] } | null;
  jwks_uri: string | null;
  scope: string[] | null;
  logo_uri: string | null;
  client_uri: string | null;
  policy_uri: string | null;
  tos_uri: string | null;
}

const ALLOWED_GRANTS = ['authorization_code', 'refresh_token'];
const SECRET_METHODS = ['client_secret_basic', 'client_secret_post', 'client_secret_jwt'];

const str = (v: unknown, name: string): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new DocumentError(`${name} must be a string.`);
  return v;
};

const httpsUri = (v: unknown, name: string): string | null => {
  const s = str(v, name);
  if (s === null) return null;
  try {
    if (new URL(s).protocol === 'https:' && s.length <= 2048) return s;
  } catch {
    // below
  }
  throw new DocumentError(`${name} must be an https URL.`);
};

/** A document that may not be used; the message is the error_description. */
export class DocumentError extends Error {}

/**
 * Validates a fetched document for the URL it came from (§4.1): `client_id` equal to the URL
 * (simple string comparison), no shared secret of any kind (§4.1 MUST NOT), a public
 * (`none`) or `private_key_jwt` client with its keys, redirect URIs present, and only the grants
 * a browser flow needs. Throws DocumentError.
 */
export function validateDocument(url: string, doc: Record<string, unknown>): ClientDocument {
  if (doc.client_id !== url) throw new DocumentError('The metadata document names another client_id than its own URL.');
  if ('client_secret' in doc || 'client_secret_expires_at' in doc)
    throw new DocumentError('A metadata document must not contain client_secret or client_secret_expires_at.');
  const method = str(doc.token_endpoint_auth_method, 'token_endpoint_auth_method') ?? 'none';
  if (SECRET_METHODS.includes(method))
    throw new DocumentError(`token_endpoint_auth_method ${method} uses a shared secret, which a document cannot hold.`);
  if (method !== 'none' && method !== 'private_key_jwt')
    throw new DocumentError('token_endpoint_auth_method must be none or private_key_jwt.');
  const jwksUri = httpsUri(doc.jwks_uri, 'jwks_uri');
  const jwks = doc.jwks;
  if (jwks !== undefined && (!jwks || typeof jwks !== 'object' || !Array.isArray((jwks as { keys?: unknown }).keys)))
    throw new DocumentError('jwks must be a JWK Set.');
  if (jwks !== undefined && jwksUri) throw new DocumentError('jwks and jwks_uri must not both be given.');
  if (method === 'private_key_jwt' && jwks === undefined && !jwksUri)
    throw new DocumentError('A private_key_jwt client needs jwks or jwks_uri.');
  const redirects = doc.redirect_uris;
  if (!Array.isArray(redirects) || redirects.length === 0 || redirects.length > 20)
    throw new DocumentError('redirect_uris must be a list of 1 to 20 URIs.');
  for (const r of redirects) {
    if (typeof r !== 'string' || r.length > 2048 || !URL.canParse(r) || r.includes('#'))
      throw new DocumentError('Each redirect URI must be an absolute URI without a fragment.');
  }
  const grants = doc.grant_types === undefined ? ['authorization_code'] : doc.grant_types;
  if (!Array.isArray(grants) || grants.some((g) => typeof g !== 'string' || !ALLOWED_GRANTS.includes(g)))
    throw new DocumentError('grant_types may name only authorization_code and refresh_token.');
  const responseTypes = doc.response_types;
  if (responseTypes !== undefined && (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code')))
    throw new DocumentError('response_types may name only code.');
  const scope = str(doc.scope, 'scope');
  const name = str(doc.client_name, 'client_name');
  return {
    client_id: url,
    client_name: name ? name.slice(0, 100) : null,
    redirect_uris: [...new Set(redirects as string[])],
    grant_types: [...new Set(grants as string[])],
    token_endpoint_auth_method: method,
    jwks: jwks === undefined ? null : (jwks as { keys: object[] }),
    jwks_uri: jwksUri,
    scope: scope === null ? null : scope.split(' ').filter(Boolean),
    logo_uri: httpsUri(doc.logo_uri, 'logo_uri'),
    client_uri: httpsUri(doc.client_uri, 'client_uri'),
    policy_uri: httpsUri(doc.policy_uri, 'policy_uri'),
    tos_uri: httpsUri(doc.tos_uri, 'tos_uri'),
  };
}

/**
 * The client a document describes, bound to `tenantId` for this request. Not a row: it lives
 * as long as the cached document. Third-party always (the user is asked), public unless it
 * proves itself with private_key_jwt, PKCE always. `scopes`: what the document asks for
 * (`scope`), or else the OpenID scopes a sign-in needs. `fetchedAt` stands in for
 * created_at/updated_at (the private_key_jwt inline key cache is keyed by it).
 */
export function clientFromDocument(d: ClientDocument, tenantId: string, fetchedAt: number): Client {
  const method: TokenEndpointAuthMethod = d.token_endpoint_auth_method;
  const host = new URL(d.client_id).host;
  return {
    id: `cimd:${d.client_id}`,
    tenant_id: tenantId,
    client_id: d.client_id,
    name: d.client_name ?? host,
    client_type: method === 'private_key_jwt' ? 'confidential' : 'public',
    redirect_uris: d.redirect_uris,
    grant_types: d.grant_types,
    scopes: d.scope ?? ['openid', 'profile', 'email', 'offline_access'],
    audiences: [],
    first_party: false,
    status: 'active',
    resource_identifiers: [],
    strict_introspection: false,
    allowed_origins: [],
    logo_uri: d.logo_uri,
    client_uri: d.client_uri,
    policy_uri: d.policy_uri,
    tos_uri: d.tos_uri,
    registered_via: 'metadata_document',
    token_endpoint_auth_method: method,
    jwks: d.jwks,
    jwks_uri: d.jwks_uri,
    id_token_signed_response_alg: null,
    userinfo_signed_response_alg: null,
    access_token_signed_response_alg: null,
    require_pkce: true,
    tokens_revoked_before: null,
    created_at: fetchedAt,
    updated_at: fetchedAt,
  };
}
