/**
 * RFC 8693 token exchange (grant_type=urn:ietf:params:oauth:grant-type:token-exchange), with
 * this service's access and ID tokens, and ID-JAGs from trusted issuers
 * (draft-ietf-oauth-identity-assertion-authz-grant, id-jag.ts), as subject tokens.
 * docs/token-exchange.md has the policy. The steps, in the RFC's processing order:
 *   loadSettings → checkClientGrant → parseParameters → checkSubjectTokenType → verifySubject
 *   → verifyActor → resolveTargets → resolveScope → buildClaims
 *   | (one transaction, for an ID-JAG) consumeAssertion → issue | logExchange
 *
 * With requested_token_type id-jag the exchange issues an ID-JAG instead (id-jag-issuance.ts):
 * the same steps, each handing over to the issuance's own rules.
 *
 * Error codes follow RFC 8693 §2.2.2: an invalid or unacceptable subject or actor token is
 * `invalid_request`; a target we will not serve is `invalid_target`; scope is `invalid_scope`.
 */
import { grantableScope } from '../../scopes.js';
import { InvalidRequest, InvalidScope, InvalidTarget, UnauthorizedClient, UnsupportedGrantType } from '../../errors.js';
import { ACCESS_TOKEN_TTL_S } from '../auth/policy.js';
import { isIssuerUrl } from '../resource-identifiers.js';
import { resourceRefusal } from '../resource-indicators.js';
import type { TokenExchangeSettings } from '../token-exchange/settings.js';
import {
  ACTOR_TOKEN_TYPES,
  SUBJECT_TOKEN_TYPES,
  TOKEN_TYPE_ACCESS_TOKEN,
  TOKEN_TYPE_ID_JAG,
  TOKEN_TYPE_ID_TOKEN,
  type SubjectTokenType,
} from '../token-exchange/token-types.js';
import type { IssuedToken } from '../tokens.js';
import type { GrantDeps } from './deps.js';
import type { Grant, IssueStep, Step, TokenRequest } from './grant.js';
import { auditDelegation, checkMayAct, narrowDetails } from './delegation.js';
import { idJagSteps } from './id-jag.js';
import { idJagIssuance, type IssuancePlan } from './id-jag-issuance.js';
import { asList, ownTokens, type Subject } from './token-exchange-subjects.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** Nested `act` claims kept at most this deep (RFC 8693 §4.1 sets no limit; tokens must stay small). */
export const MAX_ACT_DEPTH = 8;

interface Exchange extends TokenRequest {
  settings: TokenExchangeSettings;
  subjectToken: string;
  subjectTokenType: SubjectTokenType;
  actorToken?: string;
  actorTokenType?: string;
  requestedScope?: string[];
  resources: string[];
  audiences: string[];
  subject: Subject;
  actor?: { sub: string };
  audience: string[];
  scope: string[];
  ttl: number;
  extra: Record<string, unknown>;
  issued: IssuedToken;
  /** requested_token_type id-jag: the service issues an ID-JAG (id-jag-issuance.ts). */
  issuing: boolean;
  plan?: IssuancePlan;
}

const depthOf = (act: unknown): number => {
  let n = 0;
  for (let a = act; a && typeof a === 'object'; a = (a as { act?: unknown }).act) n++;
  return n;
};

export function tokenExchangeGrant(deps: GrantDeps): Grant<Exchange> {
  const { issuer } = deps;
  const own = ownTokens(deps);
  const idJag = idJagSteps(deps);
  const issuance = idJagIssuance(deps);

  /** The tenant's settings, read on every request so a change applies at once on every daemon. */
  const loadSettings: Step<Exchange> = async (x) => {
    const s = await deps.tokenExchangeSettings.forTenant(x.client.tenant_id);
    if (!s?.enabled) throw new UnsupportedGrantType('Token exchange is not enabled for this tenant.');
    x.settings = s;
  };

  const checkClientGrant: Step<Exchange> = (x) => {
    if (!x.client.grant_types.includes(TOKEN_EXCHANGE_GRANT))
      throw new UnauthorizedClient('This client may not use the token-exchange grant.');
  };

  // RFC 8693 §2.1
  const parseParameters: Step<Exchange> = (x) => {
    const p = x.params;
    const subjectToken = p.single('subject_token');
    const subjectTokenType = p.single('subject_token_type');
    if (!subjectToken) throw new InvalidRequest('subject_token is required.');
    if (!subjectTokenType) throw new InvalidRequest('subject_token_type is required.');
    x.subjectToken = subjectToken;
    x.subjectTokenType = subjectTokenType as SubjectTokenType;
    x.actorToken = p.single('actor_token');
    x.actorTokenType = p.single('actor_token_type');
    if (x.actorToken && !x.actorTokenType) throw new InvalidRequest('actor_token_type is required with actor_token.');
    if (!x.actorToken && x.actorTokenType)
      throw new InvalidRequest('actor_token_type must not be sent without actor_token.');
    const requested = p.single('requested_token_type');
    x.issuing = requested === TOKEN_TYPE_ID_JAG;
    if (requested !== undefined && requested !== TOKEN_TYPE_ACCESS_TOKEN && !x.issuing) {
      throw new InvalidRequest(
        `requested_token_type ${requested} is not supported; use ${TOKEN_TYPE_ACCESS_TOKEN} or ${TOKEN_TYPE_ID_JAG}.`,
      );
    }
    const scope = p.single('scope');
    x.requestedScope = scope === undefined ? undefined : [...new Set(scope.split(' ').filter(Boolean))];
    x.resources = p.multi('resource');
    x.audiences = p.multi('audience');
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

  const checkSubjectTokenType: Step<Exchange> = (x) => {
    if (x.issuing) return issuance.checkRequest(x);
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

  const verifySubject: Step<Exchange> = async (x) => {
    if (x.issuing) {
      x.plan = await issuance.plan(x);
      return;
    }
    if (x.subjectTokenType === TOKEN_TYPE_ACCESS_TOKEN)
      x.subject = await own.accessTokenSubject(x.subjectToken, x.client, x.dpop?.jkt);
    else if (x.subjectTokenType === TOKEN_TYPE_ID_TOKEN) x.subject = await own.idTokenSubject(x.subjectToken, x.client);
    else x.subject = await idJag.subject(x.subjectToken, x.client, x.settings);
  };

  // RFC 8693 §2.1 actor_token, §4.1 act
  const verifyActor: Step<Exchange> = async (x) => {
    if (!x.actorToken || x.issuing) return;
    if (!ACTOR_TOKEN_TYPES.includes(x.actorTokenType!)) {
      throw new InvalidRequest(
        `actor_token_type ${x.actorTokenType} is not supported; use one of: ${ACTOR_TOKEN_TYPES.join(', ')}.`,
      );
    }
    const c =
      x.actorTokenType === TOKEN_TYPE_ACCESS_TOKEN
        ? await own.accessToken(x.actorToken, x.client, 'actor_token', x.dpop?.jkt)
        : await own.idToken(x.actorToken, x.client, 'actor_token');
    // The actor is proven by a token the requesting client holds for itself; a client may not
    // name someone else's token as the actor.
    if (x.actorTokenType === TOKEN_TYPE_ACCESS_TOKEN && c.client_id !== x.client.client_id) {
      throw new InvalidRequest('The actor_token was issued to another client.');
    }
    x.actor = { sub: String(c.sub) };
    checkMayAct(x.subject, x.actor.sub, issuer, x.settings.requireMayAct);
  };

  // RFC 8707 §2 and RFC 8693 §2.1: every target must be one the client may name: each
  // `resource` by the one rule (resource-indicators.ts), each `audience` (a logical name, RFC
  // 8693 §2.1) among the client's registered audiences. An ID-JAG being issued names its own
  // target (the relying authorization server), checked against the issuance policy instead.
  const resolveTargets: Step<Exchange> = async (x) => {
    if (x.issuing) return;
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
    const jagResources = x.subject.idJag?.resource === undefined ? undefined : asList(x.subject.idJag.resource);
    if (jagResources) {
      // The assertion names what it is for; the request may narrow that, not go elsewhere.
      const outside = resources.filter((r) => !jagResources.includes(r));
      if (outside.length) throw new InvalidTarget(`resource not covered by the subject_token: ${outside.join(' ')}`);
      if (!resources.length && !x.audiences.length) resources = jagResources;
    }
    // RFC 8707 §2: a resource is a resource server, never this authorization server itself
    // (shared/services/resource-identifiers.ts), whatever the client registered or the ID-JAG names.
    const ours = resources.filter((r) => isIssuerUrl(r, issuer));
    if (ours.length)
      throw new InvalidTarget(`resource names this authorization server, not a resource: ${ours.join(' ')}`);
    const audiences = [...new Set(x.audiences)];
    const notAllowed = audiences.filter((t) => !x.client.audiences.includes(t));
    if (notAllowed.length) throw new InvalidTarget(`Target not allowed for this client: ${notAllowed.join(' ')}`);
    const refusal = await resourceRefusal(deps.ds, x.client, resources, issuer);
    if (refusal) throw new InvalidTarget(refusal);
    x.resources = resources;
    x.audiences = audiences;
    const targets = [...new Set([...audiences, ...resources])];
    x.audience = targets.length ? targets : x.client.audiences.length ? [...x.client.audiences] : [issuer];
  };

  // RFC 8693 §2.1 scope, RFC 6749 §3.3: the exchange may narrow, never widen.
  // The account scope is dropped for a third-party client (docs/scopes.md, "The account scope"),
  // as at /authorize: RFC 8693 §2.2.1 has the response's `scope` say what was issued.
  const resolveScope: Step<Exchange> = (x) => {
    if (x.issuing) return;
    const ceiling = x.subject.scopeCeiling.filter((s) => x.client.scopes.includes(s) && grantableScope(x.client, s));
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

  /** The issued token's lifetime and extra claims, settled before the assertion is spent. */
  const buildClaims: Step<Exchange> = (x) => {
    if (x.issuing) {
      x.ttl = x.settings.idJagIssuance.maxLifetime;
      return;
    }
    const s = x.subject;
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
    // RFC 8693 §4.4: an unused may_act stays with the subject for the next exchange.
    if (!x.actor && s.mayAct) extra.may_act = s.mayAct;
    // RFC 9396: an agent grant's details ride along and may only narrow; the grant's id and
    // generation too, so revoking or changing the grant ends the exchanged token as well.
    const details = narrowDetails(s, x.params.single('authorization_details'));
    if (details) extra.authorization_details = details;
    if (s.agentGrant) Object.assign(extra, { agent_grant_id: s.agentGrant.id, agent_grant_gen: s.agentGrant.gen });
    x.ttl = ttl;
    x.extra = extra;
  };

  /** Last, with the token: a request refused for another reason does not spend the assertion. */
  const consumeAssertion: IssueStep<Exchange> = async (x, db) => {
    if (x.subject?.idJag) await idJag.consume(x.subject.idJag, x.client.tenant_id, db);
  };

  const issue: IssueStep<Exchange> = async (x, db) => {
    if (x.issuing) {
      x.issued = await issuance.issue(x.client, x.plan!, x.ttl, db);
      return;
    }
    x.issued = await deps.tokens.issueAccessToken({
      sub: x.subject.sub,
      clientId: x.client.client_id,
      tenantId: x.client.tenant_id,
      scope: x.scope,
      audience: x.audience,
      ttlSeconds: x.ttl,
      familyId: x.subject.fid,
      extra: x.extra,
      alg: x.client.access_token_signed_response_alg,
      jkt: x.dpop?.jkt,
      ...(x.subject.exp !== undefined ? { notAfter: x.subject.exp } : {}),
    });
    const act = x.extra.act as Record<string, unknown> | undefined;
    if (act && x.actor) {
      await auditDelegation(db, {
        client: x.client,
        sub: x.subject.sub,
        act,
        subjectTokenType: x.subjectTokenType,
        audience: x.audience,
        scope: x.scope,
        jti: x.issued.jti,
      });
    }
  };

  const logExchange: Step<Exchange> = (x) => {
    x.log.info(
      {
        client_id: x.client.client_id,
        subject_token_type: x.subjectTokenType,
        ...(x.issuing ? { issued_token_type: TOKEN_TYPE_ID_JAG, aud: x.plan!.server.issuer } : {}),
        sub: x.issuing ? x.plan!.sub : x.subject.sub,
        actor: x.actor?.sub,
        jti: x.issued.jti,
      },
      'token exchanged',
    );
  };

  return {
    type: TOKEN_EXCHANGE_GRANT,
    checks: [
      loadSettings,
      checkClientGrant,
      parseParameters,
      checkSubjectTokenType,
      verifySubject,
      verifyActor,
      resolveTargets,
      resolveScope,
      buildClaims,
    ],
    issue: [consumeAssertion, issue],
    done: [logExchange],
    // Only an ID-JAG is spent; exchanging a token of ours records nothing.
    // An issued ID-JAG and a delegating exchange are audited in the transaction that issues them.
    records: (x) => x.issuing || !!x.subject.idJag || !!x.actor,
    // RFC 8693 §2.2.1; no refresh token is ever issued by the exchange.
    respond: (x) =>
      x.issuing
        ? {
            // draft-ietf-oauth-identity-assertion-authz-grant §4.3.2: not an access token.
            access_token: x.issued.token,
            issued_token_type: TOKEN_TYPE_ID_JAG,
            token_type: 'N_A',
            expires_in: x.issued.expiresIn,
            ...(x.plan!.scope ? { scope: x.plan!.scope.join(' ') } : {}),
          }
        : {
            access_token: x.issued.token,
            issued_token_type: TOKEN_TYPE_ACCESS_TOKEN,
            token_type: x.dpop ? 'DPoP' : 'Bearer',
            expires_in: x.issued.expiresIn,
            scope: x.scope.join(' '),
          },
  };
}
