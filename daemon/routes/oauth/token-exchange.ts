/**
 * RFC 8693 token exchange at POST /token (grant_type=urn:ietf:params:oauth:grant-type:token-exchange),
 * with this service's access and ID tokens, and ID-JAGs from trusted issuers
 * (draft-ietf-oauth-identity-assertion-authz-grant), as subject tokens. docs/token-exchange.md
 * has the policy this file implements.
 *
 * The processing order, one named step each (client authentication ran before):
 *   loadSettings → checkClientGrant → parseParameters → checkSubjectTokenType → verifySubject
 *   → verifyActor → resolveTargets → resolveScope → buildClaims → consumeAssertion → issue
 *
 * Error codes follow RFC 8693 §2.2.2: an invalid or unacceptable subject or actor token is
 * `invalid_request`; a target we will not serve is `invalid_target`; scope is `invalid_scope`.
 */
import type { Middleware } from 'koa';
import type { JWTPayload } from 'jose';
import type { Client } from '../../../shared/db/entities.js';
import { grantableScope } from '../../../shared/scopes.js';
import {
  InvalidRequest,
  InvalidScope,
  InvalidTarget,
  UnauthorizedClient,
  UnsupportedGrantType,
} from '../../../shared/errors.js';
import { ACCESS_TOKEN_TTL_S } from '../../../shared/services/auth/policy.js';
import { isIssuerUrl } from '../../../shared/services/resource-identifiers.js';
import { IdJagError, verifyIdJag, type IdJagClaims } from '../../../shared/services/token-exchange/id-jag.js';
import { type TokenExchangeSettings } from '../../../shared/services/token-exchange/settings.js';
import { externalSubject, issSubOf, type IssSubIdentifier } from '../../../shared/services/token-exchange/subjects.js';
import {
  ACTOR_TOKEN_TYPES,
  SUBJECT_TOKEN_TYPES,
  TOKEN_TYPE_ACCESS_TOKEN,
  TOKEN_TYPE_ID_JAG,
  TOKEN_TYPE_ID_TOKEN,
  type SubjectTokenType,
} from '../../../shared/services/token-exchange/token-types.js';
import type { AppDeps } from '../../context.js';
import type { ClientAuthState } from '../../middleware/koa-client-auth.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** Nested `act` claims kept at most this deep (RFC 8693 §4.1 sets no limit; tokens must stay small). */
export const MAX_ACT_DEPTH = 8;

/** A verified subject: who the new token is about and what it may at most carry. */
interface Subject {
  sub: string;
  /** Scopes the issued token may at most carry (before the requesting client's own limit). */
  scopeCeiling: string[];
  /** Seconds since the epoch after which the subject is no longer good, if it says. */
  exp?: number;
  /** The subject's token family (access tokens from a login): kept, so revoking it kills the exchange too. */
  fid?: string;
  /** The subject token's own delegation chain (RFC 8693 §4.1). */
  act?: Record<string, unknown>;
  /** ID-JAG claims when the subject is an ID-JAG. */
  idJag?: IdJagClaims;
  /** The subject's issuer and identifier there, when it is another issuer's (RFC 9493 `iss_sub`). */
  subId?: IssSubIdentifier;
}

interface Exchange {
  client: Client;
  body: Record<string, unknown>;
  settings: TokenExchangeSettings;
  subjectToken: string;
  subjectTokenType: SubjectTokenType;
  actorToken?: string;
  actorTokenType?: string;
  requestedScope?: string[];
  resources: string[];
  audiences: string[];
  subject?: Subject;
  actor?: { sub: string };
  audience?: string[];
  scope?: string[];
  ttl?: number;
  extra?: Record<string, unknown>;
}

type Step = (x: Exchange) => Promise<void> | void;

/** Parameters other than resource and audience appear at most once (RFC 6749 §3.2). */
function single(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new InvalidRequest(`${name} must appear once.`);
  return v;
}

/**
 * `resource` (RFC 8707 §2) and `audience` (RFC 8693 §2.1) may repeat. The form parser turns a
 * repeated key into an array, and more than 20 repeats into an object keyed 0..n-1.
 */
function multi(body: Record<string, unknown>, name: string): string[] {
  const v = body[name];
  if (v === undefined) return [];
  if (typeof v === 'string') return [v];
  const values = Array.isArray(v)
    ? v
    : v && typeof v === 'object' && Object.keys(v).every((k, i) => k === String(i))
      ? Object.values(v)
      : undefined;
  if (!values || !values.every((x) => typeof x === 'string'))
    throw new InvalidRequest(`${name} must be one or more string values.`);
  return values;
}

const asList = (aud: unknown): string[] =>
  typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
const scopeOf = (s: unknown): string[] => (typeof s === 'string' ? s.split(' ').filter(Boolean) : []);
const depthOf = (act: unknown): number => {
  let n = 0;
  for (let a = act; a && typeof a === 'object'; a = (a as { act?: unknown }).act) n++;
  return n;
};

export function tokenExchangeGrant(deps: AppDeps): Middleware<ClientAuthState> {
  const { tokenExchangeSettings: settingsStore, issuerKeys, jtis } = deps;
  const issuer = deps.config.issuer;

  /** The tenant's settings, read on every request so a change applies at once on every daemon. */
  const loadSettings: Step = async (x) => {
    const s = await settingsStore.forTenant(x.client.tenant_id);
    if (!s?.enabled) throw new UnsupportedGrantType('Token exchange is not enabled for this tenant.');
    x.settings = s;
  };

  const checkClientGrant: Step = (x) => {
    if (!x.client.grant_types.includes(TOKEN_EXCHANGE_GRANT))
      throw new UnauthorizedClient('This client may not use the token-exchange grant.');
  };

  // RFC 8693 §2.1
  const parseParameters: Step = (x) => {
    const b = x.body;
    const subjectToken = single(b, 'subject_token');
    const subjectTokenType = single(b, 'subject_token_type');
    if (!subjectToken) throw new InvalidRequest('subject_token is required.');
    if (!subjectTokenType) throw new InvalidRequest('subject_token_type is required.');
    x.subjectToken = subjectToken;
    x.subjectTokenType = subjectTokenType as SubjectTokenType;
    x.actorToken = single(b, 'actor_token');
    x.actorTokenType = single(b, 'actor_token_type');
    if (x.actorToken && !x.actorTokenType) throw new InvalidRequest('actor_token_type is required with actor_token.');
    if (!x.actorToken && x.actorTokenType)
      throw new InvalidRequest('actor_token_type must not be sent without actor_token.');
    const requested = single(b, 'requested_token_type');
    if (requested !== undefined && requested !== TOKEN_TYPE_ACCESS_TOKEN) {
      throw new InvalidRequest(
        `requested_token_type ${requested} is not supported; only ${TOKEN_TYPE_ACCESS_TOKEN} is issued.`,
      );
    }
    const scope = single(b, 'scope');
    x.requestedScope = scope === undefined ? undefined : [...new Set(scope.split(' ').filter(Boolean))];
    x.resources = multi(b, 'resource');
    x.audiences = multi(b, 'audience');
    // Tenant limits on repeated parameters: a malformed (oversized) request, not a target question.
    if (x.resources.length > x.settings.maxResourceParams) {
      throw new InvalidRequest(
        `At most ${x.settings.maxResourceParams} resource parameters are accepted; got ${x.resources.length}.`,
      );
    }
    if (x.audiences.length > x.settings.maxAudienceParams) {
      throw new InvalidRequest(
        `At most ${x.settings.maxAudienceParams} audience parameters are accepted; got ${x.audiences.length}.`,
      );
    }
  };

  const checkSubjectTokenType: Step = (x) => {
    const t = x.subjectTokenType;
    if (!(SUBJECT_TOKEN_TYPES as readonly string[]).includes(t)) {
      throw new InvalidRequest(
        `subject_token_type ${t} is not supported; use one of: ${SUBJECT_TOKEN_TYPES.join(', ')}.`,
      );
    }
    if (!x.settings.allowedSubjectTokenTypes.includes(t))
      throw new InvalidRequest(`subject_token_type ${t} is not accepted by this tenant.`);
    if (t === TOKEN_TYPE_ID_JAG) {
      if (!x.settings.idJag.enabled) throw new InvalidRequest('ID-JAG subject tokens are not enabled for this tenant.');
      if (x.settings.idJag.requireConfidentialClient && x.client.client_type !== 'confidential') {
        throw new UnauthorizedClient('Only confidential clients may exchange an ID-JAG in this tenant.');
      }
    }
  };

  /** An access token this service issued, in the client's tenant, not revoked. */
  const ownAccessToken = async (
    token: string,
    client: Client,
    role: 'subject_token' | 'actor_token',
  ): Promise<JWTPayload> => {
    let claims;
    try {
      claims = await deps.tokens.verifyAccessToken(token);
    } catch {
      throw new InvalidRequest(`The ${role} is not a valid, unexpired access token of this issuer.`);
    }
    if (claims.tenant_id !== client.tenant_id) throw new InvalidRequest(`The ${role} belongs to another tenant.`);
    if (await deps.oauth.isAccessTokenRevoked(client.tenant_id, String(claims.jti), claims.fid))
      throw new InvalidRequest(`The ${role} has been revoked.`);
    // A token outlives neither its client's active state nor its tenant (as at the bearer APIs).
    const owner = (await deps.directory.resolveClient(String(claims.client_id)))?.client;
    if (owner?.status !== 'active' || owner.tenant_id !== client.tenant_id)
      throw new InvalidRequest(`The ${role} was issued to a client that is no longer active.`);
    return claims;
  };

  /** An ID token this service issued (typ JWT, our keys), unexpired, in the client's tenant. */
  const ownIdToken = async (
    token: string,
    client: Client,
    role: 'subject_token' | 'actor_token',
  ): Promise<JWTPayload> => {
    const claims = await deps.tokens.verifyIdTokenHint(token);
    if (!claims) throw new InvalidRequest(`The ${role} is not an ID token of this issuer.`);
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= Date.now())
      throw new InvalidRequest(`The ${role} has expired.`);
    if (claims.tenant_id !== client.tenant_id) throw new InvalidRequest(`The ${role} belongs to another tenant.`);
    // OIDC Core §2: an ID token is meant for its audience; only that client may present it.
    if (!asList(claims.aud).includes(client.client_id))
      throw new InvalidRequest(`The ${role} was issued to another client.`);
    return claims;
  };

  /** A user subject must still be active; a client subject (client_credentials) has no user row. */
  const requireActiveUser = async (tenantId: string, sub: string) => {
    const status = await deps.oauth.userStatus(tenantId, sub);
    if (status !== undefined && status !== 'active') throw new InvalidRequest("The subject's account is disabled.");
  };

  const verifySubject: Step = async (x) => {
    const { client } = x;
    if (x.subjectTokenType === TOKEN_TYPE_ACCESS_TOKEN) {
      const c = await ownAccessToken(x.subjectToken, client, 'subject_token');
      // Who may exchange it: the client it was issued to, or a resource server it is addressed
      // to (RFC 8693 §1.1 impersonation/delegation by the recipient of the token).
      const aud = asList(c.aud);
      const addressed = aud.includes(client.client_id) || client.resource_identifiers.some((r) => aud.includes(r));
      if (c.client_id !== client.client_id && !addressed)
        throw new InvalidRequest('The subject_token was neither issued to nor addressed to this client.');
      await requireActiveUser(client.tenant_id, String(c.sub));
      x.subject = {
        sub: String(c.sub),
        scopeCeiling: scopeOf(c.scope),
        exp: c.exp,
        fid: typeof c.fid === 'string' ? c.fid : undefined,
        act: c.act && typeof c.act === 'object' ? (c.act as Record<string, unknown>) : undefined,
        // A token about another issuer's subject stays marked through every further exchange.
        subId: issSubOf(c),
      };
    } else if (x.subjectTokenType === TOKEN_TYPE_ID_TOKEN) {
      const c = await ownIdToken(x.subjectToken, client, 'subject_token');
      await requireActiveUser(client.tenant_id, String(c.sub));
      // An ID token proves who the user is, not what they granted: the ceiling is what they
      // consented to for this client (first-party grants are recorded too), and openid.
      const consent = await deps.oauth.findConsent(client.tenant_id, String(c.sub), client.client_id);
      x.subject = {
        sub: String(c.sub),
        scopeCeiling: [...new Set(['openid', ...(consent?.scopes ?? [])])],
        exp: c.exp,
      };
    } else {
      let c: IdJagClaims;
      try {
        c = await verifyIdJag(x.subjectToken, {
          keys: issuerKeys,
          allowedIssuers: x.settings.idJag.allowedIssuers,
          audience: issuer,
          clientId: client.client_id,
        });
      } catch (e) {
        if (e instanceof IdJagError) throw new InvalidRequest(e.message);
        throw e;
      }
      // The tenant at this server the assertion was meant for, when the issuer says.
      if (c.aud_tenant !== undefined && c.aud_tenant !== client.tenant_id)
        throw new InvalidRequest('The subject_token was issued for another tenant (aud_tenant).');
      // The issuer's `sub` never becomes ours: it is namespaced by its issuer and marked, so a
      // trusted issuer naming a local user's id gets a token about its own subject, not about
      // that user (shared/services/token-exchange/subjects.ts).
      const external = externalSubject(c.iss, c.sub);
      x.subject = {
        sub: external.sub,
        subId: external.sub_id,
        idJag: c,
        scopeCeiling: typeof c.scope === 'string' ? scopeOf(c.scope) : [...client.scopes],
        act: c.act && typeof c.act === 'object' ? (c.act as Record<string, unknown>) : undefined,
      };
    }
  };

  // RFC 8693 §2.1 actor_token, §4.1 act
  const verifyActor: Step = async (x) => {
    if (!x.actorToken) return;
    if (!ACTOR_TOKEN_TYPES.includes(x.actorTokenType!)) {
      throw new InvalidRequest(
        `actor_token_type ${x.actorTokenType} is not supported; use one of: ${ACTOR_TOKEN_TYPES.join(', ')}.`,
      );
    }
    const c =
      x.actorTokenType === TOKEN_TYPE_ACCESS_TOKEN
        ? await ownAccessToken(x.actorToken, x.client, 'actor_token')
        : await ownIdToken(x.actorToken, x.client, 'actor_token');
    // The actor is proven by a token the requesting client holds for itself; a client may not
    // name someone else's token as the actor.
    if (x.actorTokenType === TOKEN_TYPE_ACCESS_TOKEN && c.client_id !== x.client.client_id) {
      throw new InvalidRequest('The actor_token was issued to another client.');
    }
    x.actor = { sub: String(c.sub) };
  };

  // RFC 8707 §2 and RFC 8693 §2.1: every target must be one the client is registered for.
  const resolveTargets: Step = (x) => {
    for (const r of x.resources) {
      let u: URL | undefined;
      try {
        u = new URL(r);
      } catch {
        /* reported below */
      }
      if (!u || r.includes('#')) throw new InvalidTarget(`resource ${r} is not an absolute URI without a fragment.`);
    }
    let resources = [...new Set(x.resources)];
    const jagResources = x.subject!.idJag?.resource === undefined ? undefined : asList(x.subject!.idJag.resource);
    if (jagResources) {
      // The assertion names what it is for; the request may narrow that, not go elsewhere.
      const outside = resources.filter((r) => !jagResources.includes(r));
      if (outside.length) throw new InvalidTarget(`resource not covered by the subject_token: ${outside.join(' ')}`);
      if (!resources.length && !x.audiences.length) resources = jagResources;
    }
    // RFC 8707 §2: a resource is a resource server, never this authorization server itself
    // (shared/services/resource-identifiers.ts), whatever the client registered or the ID-JAG names.
    const own = resources.filter((r) => isIssuerUrl(r, issuer));
    if (own.length)
      throw new InvalidTarget(`resource names this authorization server, not a resource: ${own.join(' ')}`);
    const audiences = [...new Set(x.audiences)];
    const notAllowed = [...resources, ...audiences].filter((t) => !x.client.audiences.includes(t));
    if (notAllowed.length) throw new InvalidTarget(`Target not allowed for this client: ${notAllowed.join(' ')}`);
    x.resources = resources;
    x.audiences = audiences;
    const targets = [...new Set([...audiences, ...resources])];
    x.audience = targets.length ? targets : x.client.audiences.length ? [...x.client.audiences] : [issuer];
  };

  // RFC 8693 §2.1 scope, RFC 6749 §3.3: the exchange may narrow, never widen.
  // The account scope is dropped for a third-party client (docs/scopes.md, "The account scope"),
  // as at /authorize: RFC 8693 §2.2.1 has the response's `scope` say what was issued.
  const resolveScope: Step = (x) => {
    const ceiling = x.subject!.scopeCeiling.filter((s) => x.client.scopes.includes(s) && grantableScope(x.client, s));
    if (x.requestedScope) {
      const requested = x.requestedScope.filter((s) => grantableScope(x.client, s));
      const outside = requested.filter((s) => !ceiling.includes(s));
      if (outside.length) throw new InvalidScope(`Scope beyond the subject_token or this client: ${outside.join(' ')}`);
      if (requested.length === 0 && x.requestedScope.length > 0)
        throw new InvalidScope('None of the requested scopes can be granted to this client.');
      x.scope = requested;
    } else {
      x.scope = ceiling;
    }
  };

  /** Last check before issuing, so a request refused for another reason does not spend the assertion. */
  const consumeAssertion: Step = async (x) => {
    const j = x.subject!.idJag;
    if (!j) return;
    if (!(await jtis.consume({ iss: j.iss, jti: j.jti, exp: j.exp, tenantId: x.client.tenant_id }))) {
      throw new InvalidRequest('The subject_token has already been used (jti replay).');
    }
  };

  /** The issued token's lifetime and extra claims, settled before the assertion is spent. */
  const buildClaims: Step = (x) => {
    const s = x.subject!;
    // RFC 8693 §4.1: the current actor on top, the subject token's chain nested under it.
    const act = x.actor ? { sub: x.actor.sub, ...(s.act ? { act: s.act } : {}) } : s.act;
    if (depthOf(act) > MAX_ACT_DEPTH)
      throw new InvalidRequest(`The delegation chain is deeper than ${MAX_ACT_DEPTH} actors.`);
    let ttl = ACCESS_TOKEN_TTL_S;
    // An exchanged token never outlives the token it was exchanged for; an ID-JAG's grant is
    // bounded by the tenant's cap instead (the assertion itself lives minutes).
    if (s.idJag) ttl = Math.min(ttl, x.settings.idJag.maxTokenLifetime);
    else if (s.exp !== undefined) ttl = Math.min(ttl, s.exp - Math.floor(Date.now() / 1000));
    if (ttl < 1) throw new InvalidRequest('The subject_token has expired.');
    const extra: Record<string, unknown> = {};
    if (act) extra.act = act;
    if (s.subId) extra.sub_id = s.subId;
    if (x.resources.length) extra.resource = x.resources.length === 1 ? x.resources[0] : x.resources;
    // The tenant under the name introspection reports it (`tenant`), for resource servers that
    // validate the JWT locally; `tenant_id` is always there because this service relies on it.
    if (s.idJag && x.settings.idJag.includeTenantClaim) extra.tenant = x.client.tenant_id;
    x.ttl = ttl;
    x.extra = extra;
  };

  const steps: Step[] = [
    loadSettings,
    checkClientGrant,
    parseParameters,
    checkSubjectTokenType,
    verifySubject,
    verifyActor,
    resolveTargets,
    resolveScope,
    buildClaims,
    consumeAssertion,
  ];

  const issue = (x: Exchange) =>
    deps.tokens.issueAccessToken({
      sub: x.subject!.sub,
      clientId: x.client.client_id,
      tenantId: x.client.tenant_id,
      scope: x.scope!,
      audience: x.audience!,
      ttlSeconds: x.ttl!,
      familyId: x.subject!.fid,
      extra: x.extra,
      alg: x.client.access_token_signed_response_alg,
      ...(x.subject!.exp !== undefined ? { notAfter: x.subject!.exp } : {}),
    });

  return async function tokenExchange(ctx) {
    const x = { client: ctx.state.client!, body: ctx.request.body as Record<string, unknown> } as Exchange;
    for (const step of steps) await step(x);
    const issued = await issue(x);
    ctx.state.log.info(
      {
        client_id: x.client.client_id,
        subject_token_type: x.subjectTokenType,
        sub: x.subject!.sub,
        actor: x.actor?.sub,
        jti: issued.jti,
      },
      'token exchanged',
    );
    ctx.set('Pragma', 'no-cache');
    // RFC 8693 §2.2.1; no refresh token is ever issued by the exchange.
    ctx.body = {
      access_token: issued.token,
      issued_token_type: TOKEN_TYPE_ACCESS_TOKEN,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      scope: x.scope!.join(' '),
    };
  };
}
