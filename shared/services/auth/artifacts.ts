/**
 * Direct-auth artifacts: what a first-party app receives instead of a session when it verifies
 * an email code with a PKCE challenge, and redeems (once, within two minutes, with the
 * verifier) for a browser session. The artifact value is random; the database holds only its
 * SHA-256. It is found by that hash before its tenant is known (lookups.ts); redeeming it is a
 * sign-in (sign-in.ts) whose proof consumes it through that tenant's scope, as a conditional
 * update with one winner.
 */
import { randomToken } from '../../crypto.js';
import type { Database, Db, Tx } from '../../db/index.js';
import { InvalidGrant } from '../../errors.js';
import { userDisabled, withReason } from './history.js';
import { Lookups, TenantScope, type ArtifactRow, type LoginUser } from '../../repositories/index.js';
import { ACR_EMAIL_CODE } from './codes.js';
import { tokenHash } from './pkce.js';
import { ARTIFACT_TTL_MS } from './policy.js';
import type { SignInProof } from './sign-in-proof.js';

/** A live (unconsumed, unexpired) artifact, for the caller to check its bindings. */
export type Artifact = Omit<ArtifactRow, 'expiresAt' | 'consumed'>;

/** Creates, finds and redeems direct-auth artifacts. */
export class ArtifactService {
  private readonly lookups: Lookups;

  constructor(private readonly db: Database) {
    this.lookups = new Lookups(db);
  }

  /**
   * Issues an artifact for a verified user, bound to the client, channel, provider and
   * challenge. `db`: the sign-in's transaction, so the artifact commits with the spent proof.
   */
  async createArtifact(
    p: {
      user: LoginUser;
      clientId: string;
      channel: string;
      providerId: string;
      codeChallenge: string;
      authRequestId: string | null;
      authTime: number;
      amr: string[];
      /**
       * The session's acr, the sign-in's. None (artifacts issued before the sign-in service
       * stored it) reads as the email code's.
       */
      acr?: string | null;
      /** The passkey of a passkey sign-in, so redemption can check it is still registered. */
      passkeyId?: string | null;
    },
    db: Db = this.db,
  ): Promise<{ artifact: string; expiresIn: number }> {
    const artifact = randomToken(32);
    const now = Date.now();
    await new TenantScope(db, p.user.tenant_id).artifacts.insert({
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
   * The sign-in method of a direct-auth artifact (sign-in-proof.ts), once the caller has
   * checked its bindings: the sign-in it was issued for, carried over (its auth_time, acr and
   * amr), for the artifact's user, who must still be active (403 access_denied). The proof's
   * `spend` consumes the artifact in the sign-in's transaction: one winner, even under
   * concurrent redemption (invalid_grant for the others).
   */
  async prove(a: Artifact): Promise<SignInProof> {
    const user = await new TenantScope(this.db, a.tenantId).users.find(a.userId);
    if (!user || user.status !== 'active') throw withReason(userDisabled(), 'user_disabled', a.userId);
    return {
      // The artifact's own acr (a passkey's, docs/passkeys.md); none is the email code's.
      acr: a.acr ?? ACR_EMAIL_CODE,
      amr: a.amr,
      authTime: a.authTime,
      provider: a.providerId,
      ...(a.passkeyId === null ? {} : { passkeyId: a.passkeyId }),
      spend: async (tx: Tx) => {
        if (!(await new TenantScope(tx, a.tenantId).artifacts.consume(a.id, Date.now())))
          throw withReason(new InvalidGrant('The direct-auth artifact was already used.'), 'already_used', a.userId);
        return { user };
      },
    };
  }
}
