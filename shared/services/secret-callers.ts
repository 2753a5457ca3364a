/**
 * A daemon's memory of the confidential clients that authenticate with a secret (HTTP Basic or
 * client_secret_post, RFC 6749 §2.3.1) at /token, /revoke and /introspect: resource servers
 * and services call on every request they serve, and reading the registration (a join with its
 * tenant) and the live secrets each time was a third of such a request's main-thread time.
 *
 * What stays exact across daemons: every call still asks whether the registration read earlier
 * is the current one (Lookups.clientStamp, one indexed read). Any change of the client or of its
 * secrets raises its updated_at, and its status and its tenant's state are compared too, so a
 * disable, a delete, a rotated or revoked secret or a suspended tenant written by any daemon
 * stops this one's memory at its next request (docs/directory.md, "Clients"). The registration
 * is read again in full at least every CALLER_CACHE_MS.
 *
 * After a secret passed, the next presentations are compared in constant time with it (while
 * the registration is unchanged and that secret unexpired), sparing the keyed hash and the read
 * of the secrets. The secret is kept only in this process's memory, as the request carried it.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Client, TokenEndpointAuthMethod } from '../db/entities.js';
import { InvalidClient } from '../errors.js';
import type { DirectoryService } from './directory.js';

/**
 * Whether a client registered for `registered` may authenticate with `used`: the method itself,
 * or a client_secret_basic client's secret in the form (docs/oauth.md, "Client authentication").
 */
export function methodAccepted(registered: TokenEndpointAuthMethod, used: TokenEndpointAuthMethod): boolean {
  return used === registered || (registered === 'client_secret_basic' && used === 'client_secret_post');
}

/** How long a caller's registration is reused before it is read again in full (its stamp is checked on every call). */
export const CALLER_CACHE_MS = 10_000;

/** A flood of client_ids cannot grow the memory past this; it starts again empty. */
const MAX_CALLERS = 10_000;

interface Caller {
  client: Client;
  tenantState: string;
  at: number;
  /** The secret that passed last, as presented. */
  verified?: Buffer;
  /** When that secret expires (epoch ms), null for never. */
  verifiedUntil?: number | null;
}

type Directory = Pick<DirectoryService, 'resolveClient' | 'clientStamp' | 'verifyClientSecret'>;

export class SecretCallers {
  private readonly callers = new Map<string, Caller>();

  constructor(private readonly directory: Directory) {}

  /**
   * The active confidential client `clientId` of an active tenant, registered for `method`
   * (methodAccepted), whose live secret `secret` is; else InvalidClient, with one message for
   * every failure.
   */
  async authenticate(
    clientId: string,
    secret: string,
    method: 'client_secret_basic' | 'client_secret_post',
  ): Promise<Client> {
    const now = Date.now();
    const entry = await this.current(clientId, now);
    if (!entry) throw new InvalidClient();
    const { client, tenantState } = entry;
    if (
      client.status !== 'active' ||
      tenantState !== 'active' ||
      client.client_type !== 'confidential' ||
      !methodAccepted(client.token_endpoint_auth_method, method)
    )
      throw new InvalidClient();
    const presented = Buffer.from(secret);
    if (
      entry.verified &&
      (entry.verifiedUntil === null || (entry.verifiedUntil ?? 0) > now) &&
      entry.verified.length === presented.length &&
      timingSafeEqual(entry.verified, presented)
    )
      return client;
    const match = await this.directory.verifyClientSecret(client, secret, now);
    if (!match) throw new InvalidClient();
    entry.verified = presented;
    entry.verifiedUntil = match.expires_at;
    return client;
  }

  /** The remembered registration if its stamp is still the database's, else a fresh read. */
  private async current(clientId: string, now: number): Promise<Caller | undefined> {
    let entry = this.callers.get(clientId);
    if (entry) {
      const stamp = now - entry.at > CALLER_CACHE_MS ? undefined : await this.directory.clientStamp(clientId);
      if (
        !stamp ||
        stamp.updatedAt !== entry.client.updated_at ||
        stamp.status !== entry.client.status ||
        stamp.tenantState !== entry.tenantState
      )
        entry = undefined;
    }
    if (entry) return entry;
    const found = await this.directory.resolveClient(clientId);
    if (!found) {
      this.callers.delete(clientId);
      return undefined;
    }
    entry = { client: found.client, tenantState: found.tenantState, at: now };
    if (this.callers.size >= MAX_CALLERS) this.callers.clear();
    this.callers.set(clientId, entry);
    return entry;
  }
}
