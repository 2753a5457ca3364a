import { z } from 'zod';
import { SIGNING_ALGORITHMS } from '../jws.js';
import { isAdminScope, SCOPE_ACCOUNT } from '../scopes.js';
import { GRANT_TYPES, displayName, email, redirectUri, scopeToken, webOrigin } from './common.js';
import { FapiProfileField } from './fapi.js';
import { ProvisioningOperationView } from './provisioning.js';
import { StandardClaimsInput, StandardClaimsView } from './standard-claims.js';

/** An https URL of at most 2048 characters (the interface's bound for `logo_uri`). */
const logoUri = z.url({ protocol: /^https$/ }).max(2048);
/** A policy version as the consents table holds it (VARCHAR(64)). */
const policyVersion = z.string().trim().min(1).max(64);

export const CreateTenantInput = z.strictObject({
  name: displayName,
  /** Whether an unknown address that proves it owns its mailbox becomes a user. */
  allow_signup: z.boolean().default(false),
});
export type CreateTenantInput = z.infer<typeof CreateTenantInput>;

/** OIDC Dynamic Client Registration §2 methods a client may be registered with (docs/oauth.md). */
export const TOKEN_ENDPOINT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
] as const;

/** JWK members that only a private or symmetric key has: a registered key set holds public keys only. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/**
 * A private_key_jwt client's public keys (RFC 7517 §5): EC, RSA or OKP keys, no private
 * members, at most 10. Keys meant for encryption (`use` other than `sig`) are refused.
 */
export const PublicJwks = z.strictObject({
  keys: z
    .array(
      z
        .looseObject({
          kty: z.enum(['EC', 'RSA', 'OKP']),
          kid: z.string().min(1).max(256).optional(),
          use: z.literal('sig').optional(),
          alg: z.enum(['ES256', 'PS256', 'EdDSA']).optional(),
        })
        .refine((k) => PRIVATE_JWK_MEMBERS.every((m) => !(m in k)), {
          message: 'a JWK Set for client authentication holds public keys only (no d, p, q, k…)',
        }),
    )
    .min(1)
    .max(10),
});

/**
 * A JWS algorithm a client may register for a token it receives (OIDC Registration §2):
 * RS256, PS256, ES256 or EdDSA. `none` and HS256/384/512 are refused (RFC 8725 §3.1: an
 * unsigned token, or one "signed" with the client's own secret, proves nothing to others).
 */
const signingAlg = (field: string) =>
  z.enum(SIGNING_ALGORITHMS, { error: `${field} must be one of ${SIGNING_ALGORITHMS.join(', ')}` });

export const CreateClientInput = z
  .strictObject({
    name: displayName,
    redirect_uris: z.array(redirectUri).max(50).default([]),
    grant_types: z.array(z.enum(GRANT_TYPES)).max(10).default(['authorization_code', 'refresh_token']),
    scopes: z.array(scopeToken).max(100).default(['openid', 'profile', 'email']),
    audiences: z.array(z.string().min(1).max(2048)).max(100).default([]),
    public: z.boolean().default(false),
    first_party: z.boolean().default(false),
    /** As a resource server: the audiences (RFC 8707 resource identifiers) this client serves. */
    resource_identifiers: z.array(z.string().min(1).max(2048)).max(100).default([]),
    /** Introspection by this client answers active only for tokens whose audience it serves. */
    strict_introspection: z.boolean().default(false),
    /**
     * Web origins (scheme://host[:port]) whose scripts may read this client's answers from
     * /token, /revoke and /userinfo (CORS, docs/oauth.md).
     */
    allowed_origins: z.array(webOrigin).max(50).default([]),
    /** The client's logo, shown with its consents (OIDC Dynamic Client Registration §2); https only. */
    logo_uri: logoUri.optional(),
    /**
     * How the client authenticates (docs/oauth.md). Default: `none` for a public client,
     * `private_key_jwt` when keys are given, else `client_secret_basic`.
     */
    token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).optional(),
    /** private_key_jwt: the client's public keys, inline. */
    jwks: PublicJwks.optional(),
    /** private_key_jwt: an https URL serving the client's JWK Set. */
    jwks_uri: z
      .url({ protocol: /^https$/, error: 'jwks_uri must be an https URL' })
      .max(2048)
      .optional(),
    /** OIDC Registration §2: the ID token's algorithm. Absent: ES256 (docs/oauth.md, "Signing algorithms"). */
    id_token_signed_response_alg: signingAlg('id_token_signed_response_alg').optional(),
    /** OIDC Registration §2: UserInfo answers as a JWT signed with this algorithm; absent: plain JSON. */
    userinfo_signed_response_alg: signingAlg('userinfo_signed_response_alg').optional(),
    /** The access token's algorithm (RFC 9068 JWTs). Absent: ES256. */
    access_token_signed_response_alg: signingAlg('access_token_signed_response_alg').optional(),
    /** JARM §3: the algorithm of its JWT authorization responses. Absent: ES256 (docs/jarm.md). */
    authorization_signed_response_alg: signingAlg('authorization_signed_response_alg').optional(),
    /** RFC 9701 §6: /introspect answers it with a JWT signed with this algorithm; absent: JSON unless asked. */
    introspection_signed_response_alg: signingAlg('introspection_signed_response_alg').optional(),
    /**
     * Whether /authorize demands PKCE (RFC 7636) of this client. Default true; only a
     * confidential client may be registered with false (docs/oauth.md, "PKCE").
     */
    require_pkce: z.boolean().default(true),
    /** RFC 9126 §6: only pushed authorization requests from this client (docs/par.md). Default false. */
    require_pushed_authorization_requests: z.boolean().default(false),
    /** RFC 9101 §10.5: only signed request objects from this client (docs/par.md). Default false. */
    require_signed_request_object: z.boolean().default(false),
    /** The client's FAPI 2.0 profile (docs/fapi.md); absent or null: its tenant's. */
    fapi_profile: FapiProfileField.nullable().optional(),
  })
  .superRefine((c, ctx) => {
    const method = c.token_endpoint_auth_method;
    // A public client has no credential to bind a code to its redemption: PKCE is its only
    // protection against a stolen code (RFC 9700 §2.1.1, OAuth 2.1 §7.5.1), never optional.
    if (c.public && !c.require_pkce)
      ctx.addIssue({
        code: 'custom',
        path: ['require_pkce'],
        message: 'a public client always requires PKCE; only a confidential client may turn it off',
      });
    // One method per client: a public client has no credential (`none`), and only a client
    // registered for private_key_jwt has keys, exactly one source of them.
    if (c.public && method !== undefined && method !== 'none')
      ctx.addIssue({
        code: 'custom',
        path: ['token_endpoint_auth_method'],
        message: 'a public client authenticates with none',
      });
    if (!c.public && method === 'none')
      ctx.addIssue({
        code: 'custom',
        path: ['token_endpoint_auth_method'],
        message: 'none is for public clients (public: true)',
      });
    const hasKeys = c.jwks !== undefined || c.jwks_uri !== undefined;
    if (c.jwks !== undefined && c.jwks_uri !== undefined)
      ctx.addIssue({ code: 'custom', path: ['jwks_uri'], message: 'give jwks or jwks_uri, not both' });
    if (hasKeys && (c.public || (method !== undefined && method !== 'private_key_jwt')))
      ctx.addIssue({
        code: 'custom',
        path: [c.jwks !== undefined ? 'jwks' : 'jwks_uri'],
        message: 'keys are registered only for private_key_jwt',
      });
    if (method === 'private_key_jwt' && !hasKeys)
      ctx.addIssue({ code: 'custom', path: ['jwks'], message: 'private_key_jwt needs jwks or jwks_uri' });
    // RFC 6749 §4.4: client_credentials needs a client that can authenticate.
    if (c.public && c.grant_types.includes('client_credentials')) {
      ctx.addIssue({ code: 'custom', path: ['grant_types'], message: 'a public client cannot use client_credentials' });
    }
    // Admin scopes are for service clients only (docs/scopes.md): a client that can also act
    // for a user (authorization_code, refresh_token, token exchange) would hand a user's
    // consent to "iam.admin" a token for the admin API.
    const admin = c.scopes.filter(isAdminScope);
    if (admin.length && c.grant_types.some((g) => g !== 'client_credentials')) {
      ctx.addIssue({
        code: 'custom',
        path: ['scopes'],
        message:
          `${admin.join(', ')} may be registered only on a client whose only grant type is ` +
          'client_credentials; admin callers are service clients, not users',
      });
    }
    // The account scope reaches the user's whole account API (data export, every consent):
    // first-party clients only (docs/scopes.md, "The account scope").
    if (c.scopes.includes(SCOPE_ACCOUNT) && !c.first_party) {
      ctx.addIssue({
        code: 'custom',
        path: ['scopes'],
        message:
          `${SCOPE_ACCOUNT} may be registered only on a first-party client ` +
          '(first_party: true; --first-party in the CLI)',
      });
    }
    if (c.strict_introspection && c.resource_identifiers.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['resource_identifiers'],
        message: 'strict introspection needs at least one resource identifier',
      });
    }
    if (c.grant_types.includes('authorization_code') && c.redirect_uris.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['redirect_uris'],
        message: 'the authorization_code grant needs at least one redirect URI',
      });
    }
  });
export type CreateClientInput = z.input<typeof CreateClientInput>;

/**
 * The policy versions a tenant records with every consent (`tenants.settings.consentPolicy`,
 * docs/oauth.md "Consent records"). A version left out is cleared.
 */
export const PolicyVersionsInput = z.strictObject({
  privacy_policy_version: policyVersion.optional(),
  tos_version: policyVersion.optional(),
});
export type PolicyVersionsInput = z.input<typeof PolicyVersionsInput>;

/** A user: email and name, and optionally the OIDC Core §5.1 standard claims (docs/claims.md). */
export const CreateUserInput = z.strictObject({
  email,
  name: displayName,
  ...StandardClaimsInput,
});
export type CreateUserInput = z.input<typeof CreateUserInput>;

export const TenantView = z.object({
  id: z.string(),
  name: z.string(),
  lifecycle_state: z.string(),
  allow_signup: z.boolean(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});

export const ClientView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  client_id: z.string(),
  name: z.string(),
  client_type: z.enum(['confidential', 'public']),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.string()),
  scopes: z.array(z.string()),
  audiences: z.array(z.string()),
  first_party: z.boolean(),
  resource_identifiers: z.array(z.string()),
  strict_introspection: z.boolean(),
  allowed_origins: z.array(z.string()),
  logo_uri: z.string().nullable(),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
  jwks: z.object({ keys: z.array(z.looseObject({})) }).nullable(),
  jwks_uri: z.string().nullable(),
  id_token_signed_response_alg: z.enum(SIGNING_ALGORITHMS).nullable(),
  userinfo_signed_response_alg: z.enum(SIGNING_ALGORITHMS).nullable(),
  access_token_signed_response_alg: z.enum(SIGNING_ALGORITHMS).nullable(),
  authorization_signed_response_alg: z.enum(SIGNING_ALGORITHMS).nullable().optional(),
  introspection_signed_response_alg: z.enum(SIGNING_ALGORITHMS).nullable().optional(),
  require_pkce: z.boolean(),
  require_pushed_authorization_requests: z.boolean(),
  require_signed_request_object: z.boolean(),
  /** The client's own FAPI 2.0 profile; null: its tenant's (docs/fapi.md). */
  fapi_profile: FapiProfileField.nullable().optional(),
  /** How the client came to be: `dynamic` (RFC 7591, docs/registration.md); null: the admin API or the CLI. */
  registered_via: z.string().nullable().optional(),
  /** RFC 7591 §2, as the app states them. */
  policy_uri: z.string().nullable().optional(),
  tos_uri: z.string().nullable().optional(),
  status: z.string(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});

export const CreatedClientView = ClientView.extend({
  client_secret: z.string().optional().describe('Shown once, at creation; only a hash is stored.'),
});

export const UserView = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    email: z.string(),
    name: z.string(),
    status: z.string(),
    created_at: z.number().int(),
    updated_at: z.number().int(),
  })
  .extend(StandardClaimsView.shape);

/** POST /api/admin/tenants: the tenant (fields at the top level, as before) and its provisioning operation. */
export const CreatedTenantView = TenantView.extend({ provisioning: ProvisioningOperationView });
