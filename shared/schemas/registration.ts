/**
 * Dynamic client registration (RFC 7591, RFC 7592; docs/registration.md): the request's
 * metadata, a tenant's registration policy, initial access tokens and the platform's default
 * registration tenant, as the endpoints, the admin API and the CLI take them.
 */
import { z } from 'zod';
import { isAdminScope } from '../scopes.js';
import { scopeToken, tenantId } from './common.js';

/** An https URL of at most 2048 characters (client_uri, logo_uri, policy_uri, tos_uri). */
const httpsUri = (field: string) => z.url({ protocol: /^https$/, error: `${field} must be an https URL` }).max(2048);

/**
 * RFC 7591 §2 client metadata (with OIDC Registration §2's `application_type`), and the
 * `tenant_id` extension: the tenant to register in when no initial access token names one.
 * Unknown members are ignored, as RFC 7591 §2 requires.
 */
export const RegistrationRequest = z.looseObject({
  redirect_uris: z.array(z.string().max(2048)).max(50).optional(),
  token_endpoint_auth_method: z.string().max(64).optional(),
  grant_types: z.array(z.string().max(128)).max(10).optional(),
  response_types: z.array(z.string().max(64)).max(10).optional(),
  client_name: z.string().trim().min(1).max(200).optional(),
  client_uri: httpsUri('client_uri').optional(),
  logo_uri: httpsUri('logo_uri').optional(),
  policy_uri: httpsUri('policy_uri').optional(),
  tos_uri: httpsUri('tos_uri').optional(),
  scope: z.string().max(4096).optional(),
  contacts: z.array(z.string().min(1).max(320)).max(10).optional(),
  jwks: z.unknown().optional(),
  jwks_uri: z.string().max(2048).optional(),
  software_id: z.string().min(1).max(255).optional(),
  software_version: z.string().min(1).max(255).optional(),
  software_statement: z.string().min(1).max(16384).optional(),
  application_type: z.enum(['web', 'native']).optional(),
  id_token_signed_response_alg: z.string().max(16).optional(),
  userinfo_signed_response_alg: z.string().max(16).optional(),
  tenant_id: tenantId.optional(),
});
export type RegistrationRequest = z.output<typeof RegistrationRequest>;

export const REGISTRATION_MODES = ['closed', 'initial_access_token', 'open'] as const;

/** Defaults of the policy's bounds (docs/registration.md, "Policy"). */
export const DEFAULT_OPEN_PER_IP_PER_HOUR = 10;
export const DEFAULT_OPEN_PER_TENANT_PER_DAY = 100;
export const DEFAULT_UNUSED_CLIENT_TTL_SECONDS = 7 * 86_400;

/** A software statement issuer the tenant trusts (RFC 7591 §2.3): its iss and public keys. */
const StatementIssuer = z.strictObject({
  iss: z.string().min(1).max(2048),
  jwks: z.strictObject({
    keys: z
      .array(
        z
          .looseObject({ kty: z.enum(['EC', 'RSA', 'OKP']) })
          .refine((k) => !['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'].some((m) => m in k), {
            message: 'public keys only (no d, p, q, k…)',
          }),
      )
      .min(1)
      .max(10),
  }),
});

export const RegistrationPolicyInput = z
  .strictObject({
    mode: z
      .enum(REGISTRATION_MODES)
      .default('closed')
      .describe('closed (the default): no registration; initial_access_token: with an operator token; open: anonymous'),
    scopeCeiling: z
      .array(scopeToken)
      .max(100)
      // Never registrable dynamically, so a ceiling naming one would only mislead its reader.
      .refine((l) => !l.some(isAdminScope), 'admin (iam.*) and scim scopes are never registered dynamically')
      .optional()
      .describe('The scopes a registered client may hold; left out: openid profile email offline_access'),
    openLimits: z
      .strictObject({
        perIpPerHour: z.number().int().min(1).max(10_000).default(DEFAULT_OPEN_PER_IP_PER_HOUR),
        perTenantPerDay: z.number().int().min(1).max(100_000).default(DEFAULT_OPEN_PER_TENANT_PER_DAY),
      })
      .optional()
      .describe('Anonymous registrations per client IP per hour (default 10) and per tenant per day (default 100)'),
    unusedClientTtlSeconds: z
      .number()
      .int()
      .min(0)
      .max(90 * 86_400)
      .refine((v) => v === 0 || v >= 300, 'must be 0 (never) or at least 300 seconds')
      .optional()
      .describe(
        'An anonymously registered client that no token was issued to is deleted after this (default 7 days; 0: never)',
      ),
    clientSecretTtlSeconds: z
      .number()
      .int()
      .min(0)
      .max(5 * 365 * 86_400)
      .optional()
      .describe("A registered client's secret expires after this (0 or left out: never)"),
    softwareStatementIssuers: z
      .array(StatementIssuer)
      .max(20)
      .optional()
      .describe('Trusted software statement issuers (RFC 7591 §2.3): iss and an inline JWK Set of public keys'),
  })
  .describe("A tenant's dynamic registration policy; PUT replaces it whole");
export type RegistrationPolicyInput = z.output<typeof RegistrationPolicyInput>;

export const RegistrationPolicyView = z.looseObject({
  tenantId: z.string(),
  policy: z.looseObject({ mode: z.enum(REGISTRATION_MODES) }),
});

export const InitialAccessTokenInput = z.strictObject({
  maxUses: z.number().int().min(1).max(1000).default(1).describe('How many registrations it admits (1 to 1000)'),
  expiresInSeconds: z
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(86_400)
    .describe('Lifetime in seconds (60 to 2592000; default one day)'),
  scopeCeiling: z.array(scopeToken).max(100).optional().describe("Narrows the tenant's scope ceiling for its clients"),
});
export type InitialAccessTokenInput = z.output<typeof InitialAccessTokenInput>;

export const InitialAccessTokenView = z.object({
  id: z.string(),
  tenantId: z.string(),
  maxUses: z.number().int(),
  uses: z.number().int(),
  scopeCeiling: z.array(z.string()).nullable(),
  createdBy: z.string(),
  createdAt: z.number().int(),
  expiresAt: z.number().int(),
});
export const CreatedInitialAccessToken = InitialAccessTokenView.extend({
  token: z.string().describe('Shown once; only its SHA-256 is stored'),
});

export const PlatformRegistrationInput = z.strictObject({
  defaultTenantId: tenantId.nullable().describe('Where registrations that name no tenant land; null: none'),
});
export const PlatformRegistrationView = z.object({ defaultTenantId: z.string().nullable() });
