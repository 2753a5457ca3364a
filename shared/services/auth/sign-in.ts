/**
 * The sign-in service: "a user has proven who they are by method M, for authorization request
 * R" (docs/architecture.md, "Sign-in"). Every sign-in goes through it: the email code (login
 * forms, the direct API, step-up), a passkey (login page, direct API), an upstream provider,
 * and a direct-auth artifact's redemption.
 *
 * The method checks what the user presented and returns a proof (sign-in-proof.ts); then, in
 * ONE transaction this service owns:
 * 1. the proof is spent (the code consumed, the passkey's use recorded, the upstream subject
 *    linked, the artifact consumed) and names the user;
 * 2. the authorization request the sign-in continues is consumed: one sign-in per request, a
 *    parallel second one rolls back whole;
 * 3. the session is created with the method's acr, amr and auth_time (OIDC Core §2) and
 *    recorded in the history (or, for the direct API with PKCE, an artifact is issued instead;
 *    for step-up, the signed-in session takes the new auth_time, acr and amr).
 * A failure at any step leaves none of them written: the request stays unconsumed, the code or
 * passkey use unspent, no session. The route gets back what it needs to set the cookie and
 * redirect, or to answer.
 *
 * Every attempt leaves one row in the sign-in history (history.ts, SIGN_IN_EVENTS), success or
 * failure with a stable reason: the email code records its own (codes.ts, which knows the
 * wrong code from the expired one); for the other methods, and for a refusal of step 2 or 3
 * whatever the method, this service records it (the success in the sign-in's transaction, a
 * failure after the rollback).
 */
import type { Database, Tx } from '../../db/index.js';
import { ApiError, InvalidGrant } from '../../errors.js';
import { TenantScope, type LoginUser } from '../../repositories/index.js';
import type { UpstreamCallback } from '../upstream-idp/broker.js';
import type { Artifact, ArtifactService } from './artifacts.js';
import type { VerifyCodeInput } from './codes.js';
import { failureOf, recordAuthEvent, userDisabled, withReason, type RequestMeta, type SignInEvent } from './history.js';
import type { PasskeyAssertion } from './passkey-contract.js';
import type { CreatedSession, SessionService } from './sessions.js';
import type { ProofSource, SignInProof } from './sign-in-proof.js';

/** How the user proves who they are: one key per method, its input as the route parsed it. */
export type SignInMethod =
  | { emailCode: VerifyCodeInput }
  | { passkey: PasskeyAssertion }
  | { upstream: UpstreamCallback }
  | { artifact: Artifact };

/** The services behind the methods, and the session store. */
export interface SignInMethods {
  codes: ProofSource<VerifyCodeInput>;
  passkeys: ProofSource<PasskeyAssertion>;
  upstreamBroker: ProofSource<UpstreamCallback>;
  artifacts: ProofSource<Artifact> & Pick<ArtifactService, 'createArtifact'>;
  sessions: Pick<SessionService, 'createSession' | 'reauthenticate'>;
}

/**
 * The authorization request a sign-in continues, consumed in its transaction. `via`: how a
 * request completed meanwhile is refused, in the words of the caller's interface (the pages'
 * invalid_request, the direct API's invalid_grant).
 */
export interface ContinuedRequest {
  tenantId: string;
  id: string;
  via: 'page' | 'direct';
}

/** A sign-in that ends in a browser session. */
export interface SessionTarget {
  clientId: string;
  meta: RequestMeta;
  authRequest?: ContinuedRequest;
}

/** A direct-API sign-in that ends in an artifact bound to the app's PKCE challenge (docs/oauth.md). */
export interface ArtifactTarget {
  clientId: string;
  channel: string;
  codeChallenge: string;
  /** The authorization request the artifact will continue when redeemed (not consumed now). */
  authRequestId: string | null;
  /** Where the request came from, for the sign-in history (an email code carries its own). */
  meta?: RequestMeta;
}

/** A step-up of the signed-in session (its user must be the one who proved it again). */
export interface StepUpTarget {
  tenantId: string;
  sessionId: string;
  userId: string;
}

export class SignInService {
  /** `methods`: the container itself, whose getters build each method's service on first use. */
  constructor(
    private readonly db: Database,
    private readonly methods: SignInMethods,
  ) {}

  /** Signs in to a new browser session (the cookie to set is in the result). */
  async session(method: SignInMethod, target: SessionTarget): Promise<CreatedSession> {
    return this.run(method, target, async (tx, user, proof) => {
      await this.consumeRequest(tx, target.authRequest);
      return this.methods.sessions.createSession(tx, {
        user,
        authTime: proof.authTime,
        acr: proof.acr,
        amr: proof.amr,
        clientId: target.clientId,
        meta: target.meta,
      });
    });
  }

  /** Signs in through the direct API with PKCE: a direct-auth artifact carries the sign-in to its redemption. */
  async artifact(
    method: SignInMethod,
    target: ArtifactTarget,
  ): Promise<{ artifact: string; expiresIn: number; user: LoginUser }> {
    return this.run(method, target, async (tx, user, proof) => ({
      ...(await this.methods.artifacts.createArtifact(
        {
          user,
          clientId: target.clientId,
          channel: target.channel,
          providerId: proof.provider,
          codeChallenge: target.codeChallenge,
          authRequestId: target.authRequestId,
          authTime: proof.authTime,
          amr: proof.amr,
          acr: proof.acr,
          passkeyId: proof.passkeyId ?? null,
        },
        tx,
      )),
      user,
    }));
  }

  /**
   * Step-up re-authentication (docs/passkeys.md, "Pages"): the signed-in session's user has
   * proven who they are again, so the session's auth_time, acr and amr become this sign-in's
   * (OIDC Core §2: auth_time is the time of the last active authentication). 401 invalid_token
   * when the session has ended meanwhile or the proof names another user (nothing is spent).
   */
  async stepUp(method: SignInMethod, target: StepUpTarget): Promise<void> {
    await this.run(method, {}, async (tx, user, proof) => {
      const renewed =
        user.id === target.userId &&
        (await this.methods.sessions.reauthenticate(tx, target.tenantId, target.sessionId, {
          authTime: proof.authTime,
          acr: proof.acr,
          amr: proof.amr,
        }));
      if (!renewed)
        throw withReason(new ApiError(401, 'invalid_token', 'Your session has ended; sign in again.'), 'session_ended');
    });
  }

  /**
   * The method's proof, spent with `complete` in one transaction (see the file header), and the
   * attempt recorded in the history.
   */
  private async run<T>(
    method: SignInMethod,
    target: { clientId?: string; meta?: RequestMeta },
    complete: (tx: Tx, user: LoginUser, proof: SignInProof) => Promise<T>,
  ): Promise<T> {
    // The email code records its own attempts, but for a refusal after its proof was spent.
    const own = 'emailCode' in method;
    let proof: SignInProof;
    try {
      proof = await this.prove(method);
    } catch (e) {
      if (!own) await this.recordFailure(method, target, e);
      throw e;
    }
    // Who the spent proof named, for a refusal after it (the request already used, say).
    const who: { id: string | null } = { id: null };
    let out;
    try {
      out = await this.db.transaction(async (tx) => {
        const spent = await proof.spend(tx);
        if ('refused' in spent) return spent;
        const { user } = spent;
        who.id = user.id;
        // The one check of every method (docs/directory.md, "Users: disable…"): the user's status
        // as this transaction reads it, so a disable that committed after the method's own checks
        // still wins. The proof stays spent; the refusal is recorded, then thrown.
        if ((await new TenantScope(tx, user.tenant_id).users.status(user.id)) !== 'active')
          return { refused: () => Promise.reject(withReason(userDisabled(), 'user_disabled', user.id)) };
        const done = await complete(tx, user, proof);
        if (!own) await this.record(tx, method, target, { userId: user.id, outcome: 'success' });
        return { done };
      });
    } catch (e) {
      await this.recordFailure(method, target, e, who.id);
      throw e;
    }
    // A refusal commits what the method wrote (a code spent on a disabled account), then throws.
    if ('refused' in out) {
      try {
        return await out.refused();
      } catch (e) {
        // The email code records its own refusals, but for a disabled user's (refused here).
        if (!own || failureOf(e)?.reason === 'user_disabled') await this.recordFailure(method, target, e, who.id);
        throw e;
      }
    }
    return out.done;
  }

  /** One row of the sign-in history for this attempt (history.ts, SIGN_IN_EVENTS). */
  private async record(
    db: Database | Tx,
    method: SignInMethod,
    target: { clientId?: string; meta?: RequestMeta },
    r: { userId: string | null; outcome: 'success' | 'failure'; reason?: string },
  ): Promise<void> {
    const { tenantId, event, clientId, meta } = attemptOf(method);
    await recordAuthEvent(new TenantScope(db, tenantId), {
      ...r,
      event,
      clientId: target.clientId ?? clientId,
      meta: target.meta ?? meta,
    });
  }

  /** Records a refusal with its stable reason; an error that is not one (a 500) is not recorded. */
  private async recordFailure(
    method: SignInMethod,
    target: { clientId?: string; meta?: RequestMeta },
    e: unknown,
    userId: string | null = null,
  ): Promise<void> {
    const f = failureOf(e);
    if (!f) return;
    await this.record(this.db, method, target, { userId: f.userId ?? userId, outcome: 'failure', reason: f.reason });
  }

  private prove(method: SignInMethod): Promise<SignInProof> {
    const m = this.methods;
    if ('emailCode' in method) return m.codes.prove(method.emailCode);
    if ('passkey' in method) return m.passkeys.prove(method.passkey);
    if ('upstream' in method) return m.upstreamBroker.prove(method.upstream);
    return m.artifacts.prove(method.artifact);
  }

  private async consumeRequest(tx: Tx, r: ContinuedRequest | undefined): Promise<void> {
    if (!r || (await new TenantScope(tx, r.tenantId).authRequests.consume(r.id, Date.now()))) return;
    throw withReason(
      r.via === 'direct'
        ? new InvalidGrant('The authorization challenge was already used.')
        : new ApiError(400, 'invalid_request', 'This sign-in request was already completed; start again.'),
      'request_already_used',
    );
  }
}

/** The tenant, history event and what the method's input says of the client and the request. */
function attemptOf(method: SignInMethod): {
  tenantId: string;
  event: SignInEvent;
  clientId?: string;
  meta?: RequestMeta;
} {
  if ('emailCode' in method) {
    const m = method.emailCode;
    return { tenantId: m.tenantId, event: 'email_code_verify', clientId: m.clientId, meta: m.meta };
  }
  if ('passkey' in method)
    return { tenantId: method.passkey.tenantId, event: 'passkey_verify', clientId: method.passkey.clientId };
  if ('upstream' in method) return { tenantId: method.upstream.opened.tenantId, event: 'upstream_verify' };
  return { tenantId: method.artifact.tenantId, event: 'artifact_redeem', clientId: method.artifact.clientId };
}
