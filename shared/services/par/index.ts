/**
 * Pushed authorization requests (RFC 9126) and signed request objects (RFC 9101), docs/par.md.
 * A push stores the authorization parameters /authorize's own validation accepted, under the
 * hash of a random `request_uri`, for 60 s; /authorize spends it once, for the client that
 * pushed it (a conditional UPDATE: one winner across daemons).
 */
import { createHash } from 'node:crypto';
import { randomToken } from '../../crypto.js';
import type { Client } from '../../db/entities.js';
import type { Database } from '../../db/index.js';
import { PushedRequestLookup, TenantScope, type ResolvedClient } from '../../repositories/index.js';
import type { AuthParams } from '../auth/oauth.js';
import type { ClientAuthenticator } from '../client-auth.js';
import { JtiStore } from '../token-exchange/id-jag.js';
import { InvalidRequestUri } from './errors.js';
import { AuthorizationRequestPolicyService, authorizationRequestPolicyOf } from './policy.js';
import { RequestObjectVerifier } from './request-object.js';

export { InvalidRequestObject, InvalidRequestUri } from './errors.js';
export { REQUEST_OBJECT_ALGORITHMS } from './request-object.js';

/** RFC 9126 §2.2: the `request_uri` of a push, a URN with a random part of 32 bytes. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** Seconds a pushed request lives (RFC 9126 §2.2 `expires_in`; node-oidc-provider's default too). */
export const PAR_TTL_S = 60;

const hashOf = (random: string) => createHash('sha256').update(random).digest('base64url');

export class PushedRequestService {
  /** The tenant's `authorizationRequests` section (GET|PUT …/authorization-requests). */
  readonly policy: AuthorizationRequestPolicyService;
  /** JAR verification, at /authorize and at the push. */
  readonly requestObjects: RequestObjectVerifier;
  private readonly lookup: PushedRequestLookup;

  constructor(
    private readonly db: Database,
    o: { issuer: string; clientAuth: ClientAuthenticator },
  ) {
    this.policy = new AuthorizationRequestPolicyService(db);
    // Request object jti's: the replay table client assertions use, under a prefix of their own.
    this.requestObjects = new RequestObjectVerifier({ ...o, jtis: new JtiStore(db, 'jar_') });
    this.lookup = new PushedRequestLookup(db);
  }

  /** Whether a plain /authorize is refused for this client (its own flag, or its tenant's policy). */
  pushRequired(found: ResolvedClient): boolean {
    if (found.client.require_pushed_authorization_requests) return true;
    return authorizationRequestPolicyOf(found.authorizationRequestsSection).requirePushed;
  }

  /** Stores validated parameters; RFC 9126 §2.2's answer. */
  async push(client: Client, params: AuthParams): Promise<{ request_uri: string; expires_in: number }> {
    const random = randomToken(32);
    const now = Date.now();
    await new TenantScope(this.db, client.tenant_id).pushedRequests.insert({
      id: hashOf(random),
      clientId: client.client_id,
      params: { ...params, via: 'par' },
      createdAt: now,
      expiresAt: now + PAR_TTL_S * 1000,
    });
    return { request_uri: REQUEST_URI_PREFIX + random, expires_in: PAR_TTL_S };
  }

  /**
   * Spends the pushed request `requestUri` for `clientId` (RFC 9126 §4): its tenant and the
   * parameters validated at push time. An unknown one and another client's get the same answer,
   * so a request_uri tells nothing to a client it was not pushed by. Throws InvalidRequestUri.
   */
  async take(clientId: string, requestUri: string): Promise<{ tenantId: string; params: AuthParams }> {
    const random = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : '';
    if (!/^[A-Za-z0-9_-]{20,128}$/.test(random))
      throw new InvalidRequestUri('request_uri must be one this server issued at its pushed authorization endpoint.');
    const id = hashOf(random);
    const row = await this.lookup.byHash(id);
    if (!row || row.clientId !== clientId)
      throw new InvalidRequestUri('The request_uri is unknown, or was pushed by another client.');
    const now = Date.now();
    if (row.expiresAt <= now) throw new InvalidRequestUri('The request_uri has expired; push the request again.');
    if (row.used || !(await new TenantScope(this.db, row.tenantId).pushedRequests.use(id, clientId, now)))
      throw new InvalidRequestUri('The request_uri was already used; push the request again.');
    return { tenantId: row.tenantId, params: row.params as AuthParams };
  }
}
