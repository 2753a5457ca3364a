/**
 * Token exchange's ID-JAG steps (draft-ietf-oauth-identity-assertion-authz-grant): the
 * assertion from a trusted issuer verified as the subject, and its `jti` spent in the grant's
 * transaction, with the token it buys. shared/services/token-exchange/id-jag.ts verifies the
 * JWT and keeps the issuers' keys.
 */
import type { Client } from '../../db/entities.js';
import type { Db } from '../../db/index.js';
import { InvalidRequest } from '../../errors.js';
import { IdJagError, verifyIdJag, type IdJagClaims } from '../token-exchange/id-jag.js';
import type { TokenExchangeSettings } from '../token-exchange/settings.js';
import { externalSubject } from '../token-exchange/subjects.js';
import type { GrantDeps } from './deps.js';
import { scopeOf, type Subject } from './token-exchange-subjects.js';

export function idJagSteps(deps: GrantDeps) {
  /** The ID-JAG as the subject: verified against the tenant's trusted issuers, its `sub` namespaced. */
  const subject = async (token: string, client: Client, settings: TokenExchangeSettings): Promise<Subject> => {
    let c: IdJagClaims;
    try {
      c = await verifyIdJag(token, {
        keys: deps.issuerKeys,
        allowedIssuers: settings.idJag.allowedIssuers,
        audience: deps.issuer,
        clientId: client.client_id,
        own: { issuer: deps.issuer, keySet: (kid) => deps.tokens.ownKeySet(kid) },
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
    return {
      sub: external.sub,
      subId: external.sub_id,
      idJag: c,
      scopeCeiling: typeof c.scope === 'string' ? scopeOf(c.scope) : [...client.scopes],
      act: c.act && typeof c.act === 'object' ? (c.act as Record<string, unknown>) : undefined,
      mayAct: c.may_act && typeof c.may_act === 'object' ? (c.may_act as Record<string, unknown>) : undefined,
    };
  };

  /**
   * The assertion is single use: its `jti` is spent in the transaction that issues the token,
   * the last check, so a request refused for another reason does not spend it.
   */
  const consume = async (j: IdJagClaims, tenantId: string, db: Db): Promise<void> => {
    if (!(await deps.jtis.consume({ iss: j.iss, jti: j.jti, exp: j.exp, tenantId }, db)))
      throw new InvalidRequest('The subject_token has already been used (jti replay).');
  };

  return { subject, consume };
}
