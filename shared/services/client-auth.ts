/**
 * Client authentication at /token, /revoke and /introspect (docs/oauth.md, "Client
 * authentication"): client_secret_basic and client_secret_post (RFC 6749 §2.3.1),
 * private_key_jwt (RFC 7523 §2.2 and §3, OIDC Core §9) and `none` for public clients.
 *
 * Each client is registered with one `token_endpoint_auth_method` (OIDC Dynamic Client
 * Registration §2); any other method is refused with invalid_client. The one leniency: a
 * client registered `client_secret_basic` (the registration default, and every client created
 * before the method existed) may also put the same secret in the form body, as
 * client_secret_post, which is what most client libraries (openid-client among them) send
 * when given a secret and no method. A client registered `client_secret_post` is held to it.
 *
 * Failures count against the client's and the IP's budgets (docs/security.md). A success adds
 * no database write, except the one a client assertion needs: its `jti`, recorded so it can be
 * used once (RFC 7523 §3 item 7), in the database every daemon shares.
 */
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Client, TokenEndpointAuthMethod } from '../db/entities.js';
import { InvalidClient, InvalidRequest } from '../errors.js';
import { clientJwtRefusal } from './jose-refusals.js';
import { methodAccepted, SecretCallers } from './secret-callers.js';
import type { Throttle } from './auth/throttle.js';
import type { DirectoryService, ResolvedClient } from './directory.js';
import { IdJagError, type IssuerKeys, type JtiStore } from './token-exchange/id-jag.js';

/** RFC 7523 §2.2: the `client_assertion_type` of a JWT client assertion. */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/**
 * Algorithms a client assertion may be signed with: asymmetric only (never `none` or HS*: a
 * registered public key can never verify an HMAC), the FAPI 2.0 set.
 */
export const CLIENT_ASSERTION_ALGORITHMS = ['ES256', 'PS256', 'EdDSA'];
/** How far ahead of now a client assertion's `exp` may be, seconds. */
export const CLIENT_ASSERTION_MAX_LIFETIME_S = 300;
/** Clock skew tolerated on `exp`, `nbf` and `iat`, seconds. */
export const CLIENT_ASSERTION_SKEW_S = 30;

/** What a request presents; the route reads it from the Authorization header and the form. */
export interface PresentedCredentials {
  /** Decoded HTTP Basic credentials (RFC 6749 §2.3.1). */
  basic?: { id: string; secret: string };
  client_id?: string;
  client_secret?: string;
  client_assertion_type?: string;
  client_assertion?: string;
}

/** RFC 6749 §2.3.1: both parts of Basic credentials are form-urlencoded before base64. */
export function parseBasic(header: string): { id: string; secret: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  try {
    return { id: formDecode(decoded.slice(0, i)), secret: formDecode(decoded.slice(i + 1)) };
  } catch {
    return undefined;
  }
}

type KeySet = ReturnType<typeof createLocalJWKSet>;

export class ClientAuthenticator {
  /** Inline key sets, parsed once per registration (keyed by client, checked by updated_at). */
  private readonly inline = new Map<string, { updatedAt: number; set: KeySet }>();
  /** The clients that authenticate with a secret, remembered per daemon and checked per call (secret-callers.ts). */
  readonly secretCallers: SecretCallers;

  constructor(
    private readonly o: {
      directory: DirectoryService;
      throttle: Throttle;
      /** Our issuer identifier: the one accepted `aud` of a client assertion. */
      issuer: string;
      /** The cache of clients' `jwks_uri` key sets (an IssuerKeys in `direct` mode). */
      remoteKeys: IssuerKeys;
      /** Single-use client assertion `jti`s. */
      jtis: JtiStore;
    },
  ) {
    this.secretCallers = new SecretCallers(o.directory);
  }

  /**
   * The method a request uses, and the client it names, before anything is looked up. Several
   * methods at once are refused (RFC 6749 §2.3: "MUST NOT use more than one").
   */
  static methodOf(p: PresentedCredentials): { method: TokenEndpointAuthMethod; clientId: string | undefined } {
    const assertion = p.client_assertion !== undefined || p.client_assertion_type !== undefined;
    const used = [p.basic !== undefined, p.client_secret !== undefined, assertion].filter(Boolean).length;
    if (used > 1) throw new InvalidRequest('Use one client authentication method, not several.');
    if (p.basic) {
      if (p.client_id !== undefined && p.client_id !== p.basic.id)
        throw new InvalidRequest('client_id does not match the authenticated client.');
      return { method: 'client_secret_basic', clientId: p.basic.id };
    }
    if (p.client_secret !== undefined) return { method: 'client_secret_post', clientId: p.client_id };
    if (assertion) {
      // RFC 7521 §4.2: client_id is optional beside an assertion; the assertion's `sub` names
      // the client. Unverified here: it only chooses which keys will verify the assertion.
      let sub: unknown;
      try {
        sub = decodeJwt(p.client_assertion ?? '').sub;
      } catch {
        sub = undefined;
      }
      const clientId = p.client_id ?? (typeof sub === 'string' && sub ? sub : undefined);
      return { method: 'private_key_jwt', clientId };
    }
    return { method: 'none', clientId: p.client_id };
  }

  /**
   * Authenticates the calling client, or throws InvalidClient (401), a 429 `slow_down` once a
   * budget is spent, or InvalidRequest (400) for a request using several methods. `allowPublic`
   * is false where only confidential clients may call (introspection, RFC 7662 §2.1).
   */
  async authenticate(
    p: PresentedCredentials,
    ip: string,
    opts: AuthenticateOptions,
  ): Promise<{ client: Client; method: TokenEndpointAuthMethod }> {
    const { method, clientId } = ClientAuthenticator.methodOf(p);
    if (!clientId) throw new InvalidClient('Client authentication is required.');
    this.o.throttle.clientAuthBlocked(ip);
    try {
      const client = await this.check(p, method, clientId, opts);
      return { client, method };
    } catch (e) {
      if (e instanceof InvalidClient) await this.o.throttle.clientAuthFailure(clientId, ip);
      throw e;
    }
  }

  private async check(
    p: PresentedCredentials,
    method: TokenEndpointAuthMethod,
    clientId: string,
    opts: AuthenticateOptions,
  ): Promise<Client> {
    // A secret: the remembered registration, its stamp checked (secret-callers.ts). A client_id
    // naming a metadata document has no secret, and no row: it fails there without a fetch.
    if (method === 'client_secret_basic')
      return this.secretCallers.authenticate(clientId, p.basic?.secret ?? '', method);
    if (method === 'client_secret_post')
      return this.secretCallers.authenticate(clientId, p.client_secret ?? '', method);
    const found = await (opts.resolve ?? ((id: string) => this.o.directory.resolveClient(id)))(clientId);
    const client = found?.client;
    // One message for every failure of the registration or a secret: the caller learns
    // nothing about which part was wrong.
    if (!client || client.status !== 'active' || found.tenantState !== 'active') throw new InvalidClient();
    if (!methodAccepted(client.token_endpoint_auth_method, method)) throw new InvalidClient();
    switch (method) {
      case 'none':
        if (client.client_type !== 'public' || !opts.allowPublic) throw new InvalidClient();
        return client;
      case 'private_key_jwt':
        await this.verifyAssertion(client, p);
        return client;
    }
  }

  /**
   * RFC 7523 §3 and OIDC Core §9, in order: the assertion type, the algorithm, the key (`kid`,
   * refetching a `jwks_uri` on an unknown one), the signature, `iss` = `sub` = client_id,
   * `aud`, `exp` (capped), `nbf`, `iat`, `jti`; the `jti` is spent last, after every other check.
   */
  private async verifyAssertion(client: Client, p: PresentedCredentials): Promise<void> {
    if (p.client_assertion_type !== CLIENT_ASSERTION_TYPE)
      throw new InvalidClient(`client_assertion_type must be ${CLIENT_ASSERTION_TYPE} (RFC 7523 §2.2).`);
    const assertion = p.client_assertion ?? '';
    let header: { alg?: string; kid?: string };
    try {
      header = decodeProtectedHeader(assertion);
    } catch {
      throw new InvalidClient('The client_assertion is not a JWT.');
    }
    if (!header.alg || !CLIENT_ASSERTION_ALGORITHMS.includes(header.alg))
      throw new InvalidClient(`The client_assertion must be signed with ${CLIENT_ASSERTION_ALGORITHMS.join(', ')}.`);
    const keys = await this.keysOf(client, typeof header.kid === 'string' ? header.kid : undefined);
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(assertion, keys, {
        issuer: client.client_id,
        subject: client.client_id,
        // The issuer identifier only, as draft-ietf-oauth-rfc7523bis §4 and OIDC Core 1.0
        // (errata 2) now require: an endpoint URL as audience is what the audience-injection
        // attack relies on, so it is not accepted (docs/oauth.md).
        audience: this.o.issuer,
        algorithms: CLIENT_ASSERTION_ALGORITHMS,
        clockTolerance: CLIENT_ASSERTION_SKEW_S,
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'jti'],
      }));
    } catch (e) {
      throw assertionError(e, this.o.issuer);
    }
    const now = Math.floor(Date.now() / 1000);
    const exp = claims.exp!;
    if (exp > now + CLIENT_ASSERTION_MAX_LIFETIME_S + CLIENT_ASSERTION_SKEW_S)
      throw new InvalidClient(
        `The client_assertion's exp may be at most ${CLIENT_ASSERTION_MAX_LIFETIME_S} s ahead; sign a fresh one.`,
      );
    if (claims.iat !== undefined && (typeof claims.iat !== 'number' || claims.iat > now + CLIENT_ASSERTION_SKEW_S))
      throw new InvalidClient('The client_assertion was issued in the future (iat).');
    const jti = claims.jti;
    if (typeof jti !== 'string' || !jti || jti.length > 256)
      throw new InvalidClient('The client_assertion needs a jti of 1 to 256 characters.');
    const fresh = await this.o.jtis.consume({ iss: client.client_id, jti, exp, tenantId: client.tenant_id });
    if (!fresh)
      throw new InvalidClient('The client_assertion was already used (jti); sign a new one for each request.');
  }

  /**
   * The client's registered public keys (inline `jwks`, or `jwks_uri` through the cache, refetched
   * on an unknown `kid`): client assertions here, signed request objects (shared/services/par/).
   * Throws InvalidClient naming the failure.
   */
  async keysOf(client: Client, kid: string | undefined): Promise<KeySet> {
    if (client.jwks) {
      let e = this.inline.get(client.id);
      if (!e || e.updatedAt !== client.updated_at) {
        e = { updatedAt: client.updated_at, set: createLocalJWKSet(client.jwks) };
        if (this.inline.size > 10_000) this.inline.clear(); // bounded
        this.inline.set(client.id, e);
      }
      return e.set;
    }
    if (!client.jwks_uri) throw new InvalidClient('The client has no registered keys.');
    try {
      return await this.o.remoteKeys.keySetFor(client.jwks_uri, kid);
    } catch (e) {
      if (!(e instanceof IdJagError)) throw e;
      // The client learns the kind of failure, not the fetch's details (they go to the log).
      if (e.failure === 'unknown_kid')
        throw new InvalidClient(`No key with kid "${kid}" in the client's key set (jwks_uri).`);
      throw new InvalidClient("The client's key set (jwks_uri) could not be fetched; try again later.");
    }
  }
}

/**
 * `allowPublic` is false where only confidential clients may call. `resolve` replaces the
 * directory's lookup (a metadata document client, bound to the request's tenant: the daemon's
 * client authentication middleware); it may throw InvalidClient with the reason.
 */
export interface AuthenticateOptions {
  allowPublic: boolean;
  resolve?: (clientId: string) => Promise<ResolvedClient | null>;
}

function assertionError(e: unknown, issuer: string): InvalidClient {
  const iss = {
    claims: ['iss', 'sub'],
    rule: 'The client_assertion iss and sub must both be the client_id (RFC 7523 §3).',
  };
  return new InvalidClient(clientJwtRefusal(e, 'client_assertion', issuer, iss));
}
