/**
 * Token type identifiers (RFC 8693 §3) the token exchange understands. Settings may name them
 * by their short form (`access_token`, `id_token`, `id-jag`), as the interface specification's
 * request shape does; requests at /token must use the full URN (RFC 8693 §2.1).
 */
export const TOKEN_TYPE_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
export const TOKEN_TYPE_ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
/** draft-ietf-oauth-identity-assertion-authz-grant §3: Identity Assertion JWT Authorization Grant. */
export const TOKEN_TYPE_ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

/** RFC 8693 §3; a subject only of an ID-JAG issuance (grants/id-jag-issuance.ts). */
export const TOKEN_TYPE_REFRESH_TOKEN = 'urn:ietf:params:oauth:token-type:refresh_token';

export const SUBJECT_TOKEN_TYPES = [TOKEN_TYPE_ACCESS_TOKEN, TOKEN_TYPE_ID_TOKEN, TOKEN_TYPE_ID_JAG] as const;
export type SubjectTokenType = (typeof SUBJECT_TOKEN_TYPES)[number];

/** Actor tokens (RFC 8693 §2.1 actor_token) are this service's own tokens only. */
export const ACTOR_TOKEN_TYPES: readonly string[] = [TOKEN_TYPE_ACCESS_TOKEN, TOKEN_TYPE_ID_TOKEN];

const SHORT: Record<string, SubjectTokenType> = {
  access_token: TOKEN_TYPE_ACCESS_TOKEN,
  id_token: TOKEN_TYPE_ID_TOKEN,
  'id-jag': TOKEN_TYPE_ID_JAG,
};

/** The URN for a short or full token type name, or undefined when it is not one we support. */
export function canonicalTokenType(name: string): SubjectTokenType | undefined {
  if ((SUBJECT_TOKEN_TYPES as readonly string[]).includes(name)) return name as SubjectTokenType;
  return SHORT[name];
}

/** Every accepted spelling, for messages and the OpenAPI enum. */
export const TOKEN_TYPE_NAMES = [...Object.keys(SHORT), ...SUBJECT_TOKEN_TYPES];
