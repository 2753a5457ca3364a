/**
 * RFC 7591 §2 client metadata ↔ the admin API's client registration (CreateClientInput): one
 * validation path for both, with its refusals mapped to RFC 7591 §3.2.2's codes
 * (`invalid_redirect_uri` for a redirect URI, `invalid_client_metadata` for the rest), and the
 * registration policy's own rules (docs/registration.md, "What open registration admits").
 */
import type { Client } from '../../db/entities.js';
import { ApiError, OAuthError, type FieldIssue } from '../../errors.js';
import type { RegistrationRow } from '../../repositories/index.js';
import { GRANT_TYPES } from '../../schemas/common.js';
import { RegistrationRequest } from '../../schemas/registration.js';
import { issuesOf } from '../../schemas/validate.js';
import { isAdminScope } from '../../scopes.js';
import { DEFAULT_SCOPE_CEILING, type RegistrationPolicy } from './policy.js';

export const invalidMetadata = (d: string) => new OAuthError('invalid_client_metadata', d);
export const invalidRedirect = (d: string) => new OAuthError('invalid_redirect_uri', d);

/** The default name of a client that sends no client_name (the admin API requires one). */
const UNNAMED = 'Unnamed application';

/** The admin input's field names, as RFC 7591 names them in an error. */
const RFC_NAMES: Record<string, string> = {
  name: 'client_name',
  scopes: 'scope',
  public: 'token_endpoint_auth_method',
};

/** The first issue as RFC 7591's error: a redirect URI's is invalid_redirect_uri. */
function refusalOf(details: FieldIssue[], fallback: string): OAuthError {
  const first = details[0];
  if (!first) return invalidMetadata(fallback);
  const path = first.field.split('.');
  const field = RFC_NAMES[path[0]] ?? path[0];
  const text = `${[field, ...path.slice(1)].join('.')}: ${first.message}`;
  return field === 'redirect_uris' ? invalidRedirect(text) : invalidMetadata(text);
}

/** Runs `f`, turning the admin validation's 400 into RFC 7591's error. */
export async function asRegistrationError<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof ApiError && e.status === 400 && e.error === 'invalid_request')
      throw refusalOf((e.extra.details as FieldIssue[] | undefined) ?? [], e.message);
    throw e;
  }
}

/** The request's metadata, typed; a malformed member is RFC 7591's error. */
export function parseMetadata(body: unknown): RegistrationRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw invalidMetadata('The registration request is a JSON object of client metadata (RFC 7591 §3.1).');
  const r = RegistrationRequest.safeParse(body);
  if (!r.success) throw refusalOf(issuesOf(r.error), 'invalid client metadata');
  return r.data;
}

/** The scopes a client may hold here: the tenant's ceiling, narrowed by the initial access token's. */
export function scopeCeiling(policy: RegistrationPolicy, tokenCeiling: string[] | null | undefined): string[] {
  const tenant = policy.scopeCeiling ?? DEFAULT_SCOPE_CEILING;
  return tokenCeiling ? tenant.filter((s) => tokenCeiling.includes(s)) : tenant;
}

export interface Admission {
  /** Anonymous (the open policy): its narrower rules apply. */
  anonymous: boolean;
  ceiling: string[];
}

/** The registration as CreateClientInput takes it, after the policy's checks. */
export interface MappedRegistration {
  input: Record<string, unknown>;
  fields: Pick<Client, 'registered_via' | 'policy_uri' | 'tos_uri' | 'client_uri'>;
  applicationType: 'web' | 'native';
  method: string;
}

const SECRET_METHODS = ['client_secret_basic', 'client_secret_post'];
/** RFC 8252 §7.1: a private-use URI scheme (reverse domain name), what only a native app may use. */
const isPrivateUse = (u: string) => !/^https?:/i.test(u);
/** What open registration admits (RFC 8252 §8.4 and the MCP authorization spec: no anonymous secrets). */
const OPEN_METHODS = ['none', 'private_key_jwt'];
const OPEN_GRANTS = ['authorization_code', 'refresh_token'];

/** Maps and checks RFC 7591 metadata against the policy; the admin validation runs after it. */
export function mapMetadata(m: RegistrationRequest, admission: Admission): MappedRegistration {
  const method = m.token_endpoint_auth_method ?? 'client_secret_basic'; // RFC 7591 §2's default
  const applicationType = m.application_type ?? 'web';
  const grantTypes = m.grant_types ?? ['authorization_code'];
  const responseTypes = m.response_types ?? ['code'];
  const redirectUris = m.redirect_uris ?? [];

  if (!['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'].includes(method))
    throw invalidMetadata(`token_endpoint_auth_method: ${method} is not supported here`);
  if (applicationType === 'native' && SECRET_METHODS.includes(method))
    throw invalidMetadata(
      'token_endpoint_auth_method: a native application cannot keep a secret (RFC 8252 §8.4); ' +
        'use none or private_key_jwt',
    );
  for (const g of grantTypes)
    if (!(GRANT_TYPES as readonly string[]).includes(g))
      throw invalidMetadata(`grant_types: ${g} is not supported here`);
  for (const r of responseTypes)
    if (r !== 'code') throw invalidMetadata(`response_types: only code is supported (got ${JSON.stringify(r)})`);
  // RFC 7591 §2.1: the code response type and the authorization_code grant go together.
  if (grantTypes.includes('authorization_code') !== responseTypes.includes('code') && m.response_types !== undefined)
    throw invalidMetadata('response_types and grant_types disagree: code goes with authorization_code (RFC 7591 §2.1)');
  if (m.jwks !== undefined && m.jwks_uri !== undefined)
    throw invalidMetadata('jwks and jwks_uri: give one, not both (RFC 7591 §2)');
  // OIDC Registration §2: a web client's redirect URIs are https or loopback, never a private-use scheme.
  if (applicationType === 'web')
    for (const u of redirectUris)
      if (isPrivateUse(u))
        throw invalidRedirect(`redirect_uris: ${u.slice(0, 200)}: a private-use scheme needs application_type native`);

  const scopes = m.scope === undefined ? ['openid', 'profile', 'email'] : m.scope.split(' ').filter(Boolean);
  const admin = scopes.filter(isAdminScope);
  if (admin.length) throw invalidMetadata(`scope: ${admin.join(', ')} cannot be registered dynamically`);
  const over = scopes.filter((s) => !admission.ceiling.includes(s));
  if (m.scope !== undefined && over.length)
    throw invalidMetadata(
      `scope: ${over.join(', ')} exceed(s) what this tenant allows (${admission.ceiling.join(' ')})`,
    );
  const granted = m.scope === undefined ? scopes.filter((s) => admission.ceiling.includes(s)) : scopes;

  if (admission.anonymous) {
    if (!OPEN_METHODS.includes(method))
      throw invalidMetadata(
        `token_endpoint_auth_method: open registration admits public clients (none) or private_key_jwt, not ${method}`,
      );
    const other = grantTypes.filter((g) => !OPEN_GRANTS.includes(g));
    if (other.length)
      throw invalidMetadata(
        `grant_types: open registration admits authorization_code and refresh_token, not ${other.join(', ')}`,
      );
  }

  const input: Record<string, unknown> = {
    name: m.client_name ?? UNNAMED,
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    scopes: granted,
    public: method === 'none',
    first_party: false,
    token_endpoint_auth_method: method,
    ...(m.logo_uri !== undefined ? { logo_uri: m.logo_uri } : {}),
    ...(m.jwks !== undefined ? { jwks: m.jwks } : {}),
    ...(m.jwks_uri !== undefined ? { jwks_uri: m.jwks_uri } : {}),
    ...(m.id_token_signed_response_alg ? { id_token_signed_response_alg: m.id_token_signed_response_alg } : {}),
    ...(m.userinfo_signed_response_alg ? { userinfo_signed_response_alg: m.userinfo_signed_response_alg } : {}),
  };
  const fields = {
    registered_via: 'dynamic' as const,
    policy_uri: m.policy_uri ?? null,
    tos_uri: m.tos_uri ?? null,
    client_uri: m.client_uri ?? null,
  };
  return { input, fields, applicationType, method };
}

/** The client's metadata as stored (RFC 7591 §3.2.1, RFC 7592 §3). */
export function metadataOf(c: Client, reg: RegistrationRow): Record<string, unknown> {
  const opt = (k: string, v: unknown) => (v === null || v === undefined ? {} : { [k]: v });
  return {
    client_id: c.client_id,
    client_id_issued_at: Math.floor(reg.created_at / 1000),
    client_secret_expires_at:
      c.client_type === 'confidential' && c.token_endpoint_auth_method.startsWith('client_secret')
        ? reg.client_secret_expires_at
        : 0,
    client_name: c.name,
    redirect_uris: c.redirect_uris,
    grant_types: c.grant_types,
    response_types: c.grant_types.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: c.token_endpoint_auth_method,
    application_type: reg.application_type,
    scope: c.scopes.join(' '),
    ...opt('client_uri', c.client_uri),
    ...opt('logo_uri', c.logo_uri),
    ...opt('policy_uri', c.policy_uri),
    ...opt('tos_uri', c.tos_uri),
    ...opt('jwks', c.jwks),
    ...opt('jwks_uri', c.jwks_uri),
    ...(reg.contacts.length ? { contacts: reg.contacts } : {}),
    ...opt('software_id', reg.software_id),
    ...opt('software_version', reg.software_version),
    ...opt('id_token_signed_response_alg', c.id_token_signed_response_alg),
    ...opt('userinfo_signed_response_alg', c.userinfo_signed_response_alg),
    tenant_id: c.tenant_id,
  };
}
