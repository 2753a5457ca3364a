/**
 * Signing in through an upstream OpenID provider (docs/identity-providers.md, "Signing in"):
 * the authorization code flow of OpenID Connect Core §3.1 with PKCE (RFC 7636, S256), `state`
 * (RFC 6749 §10.12) and `nonce` (OIDC Core §3.1.2.1), then the linking of the upstream subject
 * to a local user and the storage of the upstream tokens, sealed.
 *
 * - `begin` stores the pending request server-side (state hash, nonce, sealed PKCE verifier),
 *   bound to the login transaction (the authorization request) and to the browser (the hash of
 *   a cookie the route sets), and returns the upstream authorization URL.
 * - `open` finds the pending request from the `state` the upstream sends back and checks the
 *   browser's cookie against it (constant-time); `prove` spends it (single use), redeems the
 *   code through openid-client (which checks `iss` (RFC 9207), the ID token's `iss`, `aud`,
 *   `exp`, `nonce`, and with non-repudiation checks its signature against the upstream JWKS),
 *   and returns the proof whose spending links and stores, in the sign-in service's
 *   transaction with the session (services/auth/sign-in.ts).
 *
 * Linking (OIDC Core §5.7: only `iss` + `sub` identify an upstream user):
 * 1. a link of (provider, sub) names the user;
 * 2. else, when the provider allows it and the upstream says `email_verified: true`, the local
 *    user with that address is linked;
 * 3. else a local user with that address exists: refused (never linked by an unverified or
 *    unallowed address; the user signs in with their email code);
 * 4. else, when the tenant allows sign-up and the address is verified, a local user is created;
 *    otherwise refused.
 *
 * Each sign-in records `email_verified` for the user's address as the upstream says it
 * (when the upstream's address is the user's), so tokens never claim a verification the upstream
 * withdrew; an email code sign-in proves the address again (shared/services/auth/codes.ts).
 *
 * Every refusal of steps 1–4 (a local account exists but is not linkable, or is disabled; no
 * local account and sign-up closed, or no verified address for a new one) shows the one
 * message `accountRefusal` with the one status: the reason would tell whoever controls an
 * upstream account (any address it likes, unverified) whether a local account exists for an
 * address (OWASP ASVS V2.2 / WSTG-IDNT-04, account enumeration). The specific reason stays in
 * the error's `failure`, which the route logs.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import { newId, randomToken } from '../../crypto.js';
import type { Database, Tx } from '../../db/index.js';
import { Lookups, TenantScope, type UpstreamIdpRow, type UpstreamLoginStateRow } from '../../repositories/index.js';
import type { LoginUser } from '../../repositories/index.js';
import { email as emailSchema } from '../../schemas/common.js';
import { emailVerified } from '../standard-claims.js';
import { providerClientInput, UpstreamDiscoveryError, type UpstreamClients } from './client.js';
import { UPSTREAM_CALLBACK_PATH } from './registry.js';
import type { UpstreamSealer } from './sealing.js';
import type { SignInProof, Spent } from '../auth/sign-in-proof.js';

/** How long a pending upstream sign-in may take. */
export const UPSTREAM_STATE_TTL_MS = 10 * 60_000;
/** The `acr` and `amr` of a session made by an upstream sign-in (RFC 8176 §2: `fed`). */
export const ACR_UPSTREAM = 'urn:iam:acr:upstream';
export const AMR_UPSTREAM = ['fed'];

export type UpstreamLoginFailure =
  | 'state_invalid'
  | 'browser_mismatch'
  | 'provider_unavailable'
  | 'upstream_error'
  | 'upstream_response_invalid'
  | 'account_mismatch'
  | 'account_exists'
  | 'email_not_verified'
  | 'no_account'
  | 'account_disabled';

/**
 * The user's page after a refusal that depends on the tenant's local accounts: the same words
 * whether an account exists or not (the `failure` code, logged, tells which).
 */
export function accountRefusal(providerName: string): string {
  return (
    `Signing in with ${providerName} cannot be completed here. ` +
    'Sign in with an email code instead, or ask the administrator of this service for help.'
  );
}

/** A refused upstream sign-in; `message` is for the user's page and names no secret. */
export class UpstreamLoginError extends Error {
  constructor(
    readonly failure: UpstreamLoginFailure,
    message: string,
    /** The authorization request to go back to, when known. */
    readonly authRequestId?: string,
  ) {
    super(message);
    this.name = 'UpstreamLoginError';
  }
}

const sha256 = (v: string) => createHash('sha256').update(v).digest('base64url');

/** A pending upstream sign-in, found from its state and checked against the browser. */
export interface OpenedUpstreamLogin {
  tenantId: string;
  state: string;
  row: UpstreamLoginStateRow;
}

/** The upstream's redirect back, to be proven (`prove`). */
export interface UpstreamCallback {
  opened: OpenedUpstreamLogin;
  /** The callback URL as the upstream was told it, with the query it sent. */
  callbackUrl: URL;
  /** Whether the tenant lets a new upstream user sign up (linking step 4). */
  allowSignup: boolean;
}

export class UpstreamBroker {
  private readonly lookups: Lookups;

  constructor(
    private readonly ds: Database,
    private readonly deps: { sealer: UpstreamSealer; clients: UpstreamClients; issuer: string },
  ) {
    this.lookups = new Lookups(ds);
  }

  get redirectUri(): string {
    return `${this.deps.issuer}${UPSTREAM_CALLBACK_PATH}`;
  }

  /** The login page's buttons: the tenant's active providers, in registration order. */
  async buttons(tenantId: string): Promise<{ slug: string; name: string }[]> {
    const rows = await new TenantScope(this.ds, tenantId).upstreamIdps.list({ activeOnly: true });
    return rows.map((r) => ({ slug: r.slug, name: r.display_name }));
  }

  /** The provider of the user's first link that needs a sign-in through its upstream, if any. */
  async reauthenticationProvider(tenantId: string, userId: string): Promise<string | undefined> {
    const links = await new TenantScope(this.ds, tenantId).upstreamLinks.needingReauthentication(userId);
    return links[0]?.provider_id;
  }

  private async configuration(p: UpstreamIdpRow): Promise<oidc.Configuration> {
    try {
      return await this.deps.clients.configuration(providerClientInput(p, this.deps.sealer));
    } catch (e) {
      if (e instanceof UpstreamDiscoveryError)
        throw new UpstreamLoginError('provider_unavailable', `${p.display_name} cannot be reached at the moment.`);
      throw e;
    }
  }

  /**
   * Starts a sign-in at `provider` (slug or id) for authorization request `authRequestId`.
   * `browserToken`: the browser's binding cookie when it has one (reused, so two tabs can sign
   * in at once); the one to set is returned. `userHint`: the local user who must come back
   * (re-authentication of a link).
   */
  async begin(p: {
    tenantId: string;
    provider: string;
    authRequestId: string;
    browserToken?: string;
    userHint?: string;
  }): Promise<{ url: string; browserToken: string }> {
    const scope = new TenantScope(this.ds, p.tenantId);
    const provider = p.provider.startsWith('uip_')
      ? await scope.upstreamIdps.get(p.provider)
      : await scope.upstreamIdps.getBySlug(p.provider);
    if (!provider || provider.status !== 'active')
      throw new UpstreamLoginError('provider_unavailable', 'This sign-in option is not available.', p.authRequestId);
    const config = await this.configuration(provider);
    const browserToken =
      p.browserToken && /^[A-Za-z0-9_-]{32}$/.test(p.browserToken) ? p.browserToken : randomToken(24);
    const state = randomToken(32);
    const nonce = randomToken(24);
    const verifier = oidc.randomPKCECodeVerifier();
    const id = newId('uls');
    const now = Date.now();
    await scope.upstreamLoginStates.insert({
      id,
      provider_id: provider.id,
      state_hash: sha256(state),
      auth_request_id: p.authRequestId,
      binding: sha256(browserToken),
      nonce,
      code_verifier_sealed: this.deps.sealer.seal(verifier, 'upstream_login_states.code_verifier_sealed', id),
      key_id: this.deps.sealer.keyId,
      user_hint: p.userHint ?? null,
      created_at: now,
      expires_at: now + UPSTREAM_STATE_TTL_MS,
    });
    const scopes = provider.scopes.split(' ');
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: provider.scopes,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      // OIDC Core §11: offline_access is honoured only with prompt=consent.
      ...(scopes.includes('offline_access') ? { prompt: 'consent' } : {}),
    });
    return { url: url.toString(), browserToken };
  }

  /**
   * The pending sign-in the upstream's `state` names, if it was started in this browser: the
   * stored hash of the browser's cookie is compared constant-time.
   */
  async open(state: string | undefined, browserToken: string | undefined): Promise<OpenedUpstreamLogin> {
    if (!state || state.length > 200)
      throw new UpstreamLoginError('state_invalid', 'This sign-in could not be matched to a request.');
    const hash = sha256(state);
    const tenantId = await this.lookups.upstreamLoginStateTenant(hash);
    const row = tenantId
      ? await new TenantScope(this.ds, tenantId).upstreamLoginStates.getByStateHash(hash)
      : undefined;
    if (!tenantId || !row || row.consumed_at !== null || row.expires_at <= Date.now())
      throw new UpstreamLoginError('state_invalid', 'This sign-in has expired or was already used. Start again.');
    const a = Buffer.from(row.binding);
    const b = Buffer.from(browserToken ? sha256(browserToken) : '');
    if (a.length !== b.length || !timingSafeEqual(a, b))
      // No way back into that authorization request from here: it belongs to the browser that
      // started it, and offering its login page to this one would be a login CSRF.
      throw new UpstreamLoginError(
        'browser_mismatch',
        'This sign-in was started in another browser. Start again here.',
      );
    return { tenantId, state, row };
  }

  /**
   * The sign-in method of an upstream provider (sign-in-proof.ts): spends the pending sign-in
   * and redeems the code at the upstream; the proof's `spend`, in the sign-in's transaction
   * (the session, the consumed authorization request), links the upstream subject to a local
   * user and stores the upstream tokens sealed. Throws UpstreamLoginError.
   */
  async prove({ opened, callbackUrl, allowSignup }: UpstreamCallback): Promise<SignInProof> {
    const { tenantId, row } = opened;
    const scope = new TenantScope(this.ds, tenantId);
    const back = row.auth_request_id;
    if (!(await scope.upstreamLoginStates.consume(row.id, Date.now())))
      throw new UpstreamLoginError('state_invalid', 'This sign-in has expired or was already used. Start again.');
    const provider = await scope.upstreamIdps.get(row.provider_id);
    if (!provider || provider.status !== 'active')
      throw new UpstreamLoginError('provider_unavailable', 'This sign-in option is not available.', back);
    const config = await this.configuration(provider);
    const verifier = this.deps.sealer.open(
      row.code_verifier_sealed,
      row.key_id,
      'upstream_login_states.code_verifier_sealed',
      row.id,
    );
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: verifier,
        expectedState: opened.state,
        expectedNonce: row.nonce,
        idTokenExpected: true,
      });
    } catch (e) {
      if (e instanceof oidc.AuthorizationResponseError)
        throw new UpstreamLoginError(
          'upstream_error',
          e.error === 'access_denied'
            ? `The sign-in at ${provider.display_name} was cancelled.`
            : `${provider.display_name} did not sign you in (${e.error}).`,
          back,
        );
      throw new UpstreamLoginError(
        'upstream_response_invalid',
        `The answer of ${provider.display_name} could not be accepted: ${(e as Error).message}`,
        back,
      );
    }
    const idClaims = tokens.claims();
    if (!idClaims?.sub)
      throw new UpstreamLoginError('upstream_response_invalid', 'The upstream sent no ID token.', back);
    // With the code flow, the claims of the `email` and `profile` scopes may come only from the
    // UserInfo endpoint (OIDC Core §5.4); its `sub` must be the ID token's (§5.3.2).
    let claims: Record<string, unknown> & { sub: string; iss: string } = { ...idClaims };
    if (claims.email === undefined && config.serverMetadata().userinfo_endpoint) {
      try {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
        claims = { ...info, ...idClaims, email: info.email, email_verified: info.email_verified, name: info.name };
      } catch (e) {
        throw new UpstreamLoginError(
          'upstream_response_invalid',
          `The user information of ${provider.display_name} could not be read: ${(e as Error).message}`,
          back,
        );
      }
    }
    const expiresIn = tokens.expiresIn();
    const now = Date.now();
    const sealFor = (linkId: string) =>
      this.deps.sealer.sealLinkTokens(linkId, {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token ?? null,
        idToken: tokens.id_token ?? null,
        accessExpiresAt: expiresIn === undefined ? null : now + expiresIn * 1000,
      });
    // An address the upstream sends is used only if it is one (the same rules as a local
    // user's address); anything else counts as no address.
    const parsedEmail = emailSchema.safeParse(claims.email);
    const email = parsedEmail.success ? parsedEmail.data : undefined;
    // Only the JSON boolean true counts (OIDC Core §5.1); "true" as a string does not.
    const verified = claims.email_verified === true;
    const name = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 200) : undefined;

    const spend = async (tx: Tx): Promise<Spent> => {
      const s = new TenantScope(tx, tenantId);
      const link = await s.upstreamLinks.findBySubject(provider.id, claims.sub);
      if (row.user_hint && link?.user_id !== row.user_hint)
        throw new UpstreamLoginError(
          'account_mismatch',
          `You signed in at ${provider.display_name} as another account than the one linked to this sign-in.`,
          back,
        );
      let user: LoginUser | undefined;
      // From here on each refusal says only `accountRefusal`: see the header (account enumeration).
      const refuse = (failure: UpstreamLoginFailure) =>
        new UpstreamLoginError(failure, accountRefusal(provider.display_name), back);
      if (link) {
        user = await s.users.find(link.user_id);
        if (!user || user.status !== 'active') throw refuse('account_disabled');
        await s.upstreamLinks.storeSignIn(link.id, sealFor(link.id), now);
      } else {
        const local = email ? await s.users.findByEmail(email) : undefined;
        if (local) {
          if (!(provider.link_by_verified_email && verified)) throw refuse('account_exists');
          if (local.status !== 'active') throw refuse('account_disabled');
          user = local;
        } else {
          if (!allowSignup) throw refuse('no_account');
          if (!email || !verified) throw refuse('email_not_verified');
          user = await s.users.insertSignup({ id: newId('usr'), email, name: name ?? email, now });
        }
        const id = newId('uil');
        await s.upstreamLinks.insert({
          id,
          provider_id: provider.id,
          user_id: user.id,
          upstream_iss: String(claims.iss),
          upstream_sub: claims.sub,
          ...sealFor(id),
          state: 'active',
          lease_holder: null,
          lease_until: null,
          last_refreshed_at: null,
          refresh_failures: 0,
          last_error_code: null,
          created_at: now,
          updated_at: now,
        });
      }
      // What the upstream says of the user's own address is recorded (OIDC Core §5.1
      // email_verified; absent or not the JSON true counts as unverified), so the ID token and
      // UserInfo say it too. An upstream address that is not the user's says nothing of theirs.
      if (email === user.email && emailVerified(user) !== verified) {
        await s.users.setEmailVerified(user.id, verified, now);
        user = { ...user, email_verified: verified ? 1 : 0 };
      }
      return { user };
    };
    return { acr: ACR_UPSTREAM, amr: AMR_UPSTREAM, authTime: Date.now(), provider: provider.id, spend };
  }
}
