/**
 * Direct-auth artifacts: what a first-party app receives instead of a session when it verifies
 * an email code with a PKCE challenge, and redeems (once, within two minutes, with the
 * verifier) for a browser session. The artifact value is random; the database holds only its
 * SHA-256. It is found by that hash before its tenant is known (lookups.ts); consuming it goes
 * through that tenant's scope, as a conditional update with one winner.
 */
import { randomToken } from '../../crypto.js';
import type { Database, Tx } from '../../db/index.js';
import { InvalidGrant } from '../../errors.js';
import { Lookups, TenantScope, type ArtifactRow, type LoginUser } from '../../repositories/index.js';
import { tokenHash } from './pkce.js';
import { ARTIFACT_TTL_MS } from './policy.js';

/** A live (unconsumed, unexpired) artifact, for the caller to check its bindings. */
export type Artifact = Omit<ArtifactRow, 'expiresAt' | 'consumed'>;

/** Creates, finds and redeems direct-auth artifacts. */
export class ArtifactService {
  private readonly lookups: Lookups;

  constructor(private readonly db: Database) {
    this.lookups = new Lookups(db);
  }

  /** Issues an artifact for a verified user, bound to the client, channel, provider and challenge. */
  async createArtifact(p: {
    user: LoginUser;
    clientId: string;
    channel: string;
    providerId: string;
    codeChallenge: string;
    authRequestId: string | null;
    authTime: number;
    amr: string[];
    /** The session's acr when it is not the email code's (a passkey's). */
    acr?: string | null;
    /** The passkey of a passkey sign-in, so redemption can check it is still registered. */
    passkeyId?: string | null;
  }): Promise<{ artifact: string; expiresIn: number }> {
    const artifact = randomToken(32);
    const now = Date.now();
    await new TenantScope(this.db, p.user.tenant_id).artifacts.insert({
      id: tokenHash(artifact),
      clientId: p.clientId,
      userId: p.user.id,
      channel: p.channel,
      providerId: p.providerId,
      codeChallenge: p.codeChallenge,
      authRequestId: p.authRequestId,
      authTime: p.authTime,
      amr: p.amr,
      acr: p.acr ?? null,
      passkeyId: p.passkeyId ?? null,
      createdAt: now,
      expiresAt: now + ARTIFACT_TTL_MS,
    });
    return { artifact, expiresIn: ARTIFACT_TTL_MS / 1000 };
  }

  /** Looks up an unconsumed, unexpired artifact (the caller checks the bindings, then redeems). */
  async findArtifact(artifact: string): Promise<Artifact | undefined> {
    const r = await this.lookups.artifactByHash(tokenHash(artifact));
    if (!r || r.consumed || r.expiresAt <= Date.now()) return undefined;
    const { expiresAt: _e, consumed: _c, ...live } = r;
    return live;
  }

  /**
   * Redeems an artifact in one transaction: consumes it (one winner, even under concurrent
   * redemption), consumes the authorization request it continues when `challengeId` is given,
   * then runs `then` (which creates the session). Throws invalid_grant when either was used.
   */
  async redeem<T>(a: Artifact, challengeId: string | null, then: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, a.tenantId);
      if (!(await scope.artifacts.consume(a.id, Date.now())))
        throw new InvalidGrant('The direct-auth artifact was already used.');
      if (challengeId !== null && !(await scope.authRequests.consume(challengeId, Date.now())))
        throw new InvalidGrant('The authorization challenge was already used.');
      return then(tx);
    });
  }
}
