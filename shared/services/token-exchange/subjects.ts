/**
 * Subjects from other issuers (ID-JAG, docs/token-exchange.md "Subjects from other issuers").
 *
 * An external issuer's `sub` is unique only at that issuer (OIDC Core §2, §5.7); used as is,
 * an issuer the tenant trusts could name `sub` = a local user's id (or a client's id) and the
 * exchanged token would pass for that local user at /userinfo and the user API. So the token
 * issued for an external subject never carries the external value as `sub`: its `sub` is a
 * namespaced, opaque identifier derived from the pair (issuer, subject), which no local user
 * or client id can equal (`idjag:` + base64url SHA-256; local ids are `usr_…` and client ids
 * base64url, neither holds a colon), and the pair itself travels as the RFC 9493 §3.2.6
 * `iss_sub` subject identifier in `sub_id`, the claim that marks the token as being about a
 * subject of another issuer.
 */
import { createHash } from 'node:crypto';

/** Prefix of a namespaced external subject. */
export const EXTERNAL_SUBJECT_PREFIX = 'idjag:';

/** RFC 9493 §3.2.6 "Issuer and Subject Identifier Format". */
export interface IssSubIdentifier {
  format: 'iss_sub';
  iss: string;
  sub: string;
}

/** The `sub` and `sub_id` of a token issued for `sub` at the external issuer `iss`. */
export function externalSubject(iss: string, sub: string): { sub: string; sub_id: IssSubIdentifier } {
  const digest = createHash('sha256').update(iss).update('\0').update(sub).digest('base64url');
  return { sub: EXTERNAL_SUBJECT_PREFIX + digest, sub_id: { format: 'iss_sub', iss, sub } };
}

/** The `sub_id` of a verified token when it is an `iss_sub` identifier, to carry it on unchanged. */
export function issSubOf(claims: Record<string, unknown>): IssSubIdentifier | undefined {
  const s = claims.sub_id as Partial<IssSubIdentifier> | undefined;
  return s && typeof s === 'object' && s.format === 'iss_sub' && typeof s.iss === 'string' && typeof s.sub === 'string'
    ? { format: 'iss_sub', iss: s.iss, sub: s.sub }
    : undefined;
}

/**
 * Whether a verified access token of this service is about a subject of another issuer:
 * it carries `sub_id`, or its `sub` is namespaced. Such a token is never a local user's, so
 * the endpoints that act for a local user (/userinfo, /api/user/…) refuse it.
 */
export function isExternalSubject(claims: { sub?: unknown; sub_id?: unknown }): boolean {
  return (
    claims.sub_id !== undefined || (typeof claims.sub === 'string' && claims.sub.startsWith(EXTERNAL_SUBJECT_PREFIX))
  );
}
