/**
 * Token exchange's delegation rules (docs/token-exchange.md, "Delegation"): RFC 8693 §4.4
 * `may_act`, RFC 9396 `authorization_details` that ride along and may only narrow, and the
 * audit event of an exchange that delegates.
 */
import type { Client } from '../../db/entities.js';
import type { Db } from '../../db/index.js';
import { InvalidRequest, OAuthError } from '../../errors.js';
import { widening } from '../agents/narrowing.js';
import { audit } from '../audit.js';
import type { Subject } from './token-exchange-subjects.js';

/** RFC 9396 §5: authorization_details the server will not grant. */
export class InvalidAuthorizationDetails extends OAuthError {
  constructor(d: string) {
    super('invalid_authorization_details', d);
  }
}

/**
 * RFC 8693 §4.4: a subject token's `may_act` names who may act for its subject; the actor must
 * be that party (its `sub`, and its `iss` when `may_act` names one: actor tokens are always this
 * service's own). Without `may_act`, the exchange proceeds unless the tenant requires it.
 */
export function checkMayAct(subject: Subject, actorSub: string, issuer: string, required: boolean): void {
  const m = subject.mayAct;
  if (!m) {
    if (required)
      throw new InvalidRequest(
        'This tenant requires the subject_token to name its actor in may_act (RFC 8693 §4.4); it has none.',
      );
    return;
  }
  if (m.sub !== actorSub || (m.iss !== undefined && m.iss !== issuer))
    throw new InvalidRequest(
      "The actor_token's subject is not the one the subject_token's may_act allows (RFC 8693 §4.4).",
    );
}

/**
 * The `authorization_details` of the issued token: the subject's, or the request's when it sends
 * some, which must stay within the subject's (the rule an agent grant's PATCH follows,
 * agents/narrowing.ts). A subject without any has nothing to narrow: asking for some is refused.
 */
export function narrowDetails(subject: Subject, raw: string | undefined): Record<string, unknown>[] | undefined {
  if (raw === undefined) return subject.authorizationDetails;
  let requested: unknown;
  try {
    requested = JSON.parse(raw);
  } catch {
    throw new InvalidAuthorizationDetails('authorization_details is not JSON (RFC 9396 §2).');
  }
  if (
    !Array.isArray(requested) ||
    requested.length === 0 ||
    !(requested as unknown[]).every(
      (e) => !!e && typeof e === 'object' && !Array.isArray(e) && typeof (e as { type?: unknown }).type === 'string',
    )
  )
    throw new InvalidAuthorizationDetails('authorization_details must be a non-empty array of objects with a type.');
  if (!subject.authorizationDetails)
    throw new InvalidAuthorizationDetails('The subject_token carries no authorization_details to narrow.');
  const w = widening(subject.authorizationDetails, requested as Record<string, unknown>[]);
  if (w)
    throw new InvalidAuthorizationDetails(
      `authorization_details.${w.index}.${w.member} is wider than the subject_token's: ${w.message}`,
    );
  return requested as Record<string, unknown>[];
}

/** An exchange delegates when the issued token carries an actor chain: audited, without token values. */
export async function auditDelegation(
  db: Db,
  p: {
    client: Client;
    sub: string;
    act: Record<string, unknown>;
    subjectTokenType: string;
    audience: string[];
    scope: string[];
    jti: string;
  },
): Promise<void> {
  await audit(
    db,
    { type: 'client', id: p.client.client_id },
    {
      tenantId: p.client.tenant_id,
      action: 'token.exchange',
      targetType: 'token',
      targetId: p.jti,
      summary: {
        client_id: p.client.client_id,
        sub: p.sub,
        act: p.act,
        subject_token_type: p.subjectTokenType,
        aud: p.audience,
        scope: p.scope.join(' '),
      },
    },
  );
}
