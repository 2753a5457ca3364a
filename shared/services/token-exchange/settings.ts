/**
 * A tenant's token exchange settings (the interface specification's "Token exchange settings"),
 * kept in `tenants.settings.tokenExchange`. The token endpoint reads them on every exchange
 * request (one primary-key read), so a change applies at once on every daemon sharing the
 * database, without a restart or a cache to expire.
 */
import { z } from 'zod';
import type { Database } from '../../db/index.js';
import { badRequest, notFound } from '../../errors.js';
import { TenantRepository } from '../../repositories/index.js';
import { classifyAddress, isIpLiteral } from '../../net/address.js';
import { parseInput } from '../../schemas/validate.js';
import { ACCESS_TOKEN_TTL_S } from '../auth/policy.js';
import type { Actor } from '../audit.js';
import { updateSettingsSection } from '../tenant-settings.js';
import {
  DEFAULT_ISSUANCE,
  issuanceFrom,
  issuanceInput,
  IssuanceView,
  mergeIssuance,
  type IdJagIssuanceSettings,
} from './issuance-settings.js';
import { canonicalTokenType, TOKEN_TYPE_ACCESS_TOKEN, TOKEN_TYPE_ID_JAG, TOKEN_TYPE_NAMES } from './token-types.js';

export interface IdJagSettings {
  enabled: boolean;
  /** Exact issuer identifiers (compared as strings, OIDC Discovery §4.3). */
  allowedIssuers: string[];
  /** Upper bound of an access token issued for an ID-JAG, seconds (never above the access token lifetime). */
  maxTokenLifetime: number;
  /** Add a `tenant` claim (this service's tenant id, as introspection names it) to tokens issued for an ID-JAG. */
  includeTenantClaim: boolean;
  /** Refuse ID-JAG exchanges by public clients. */
  requireConfidentialClient: boolean;
}

export interface TokenExchangeSettings {
  enabled: boolean;
  /** Token type URNs (short names are canonicalised when stored). */
  allowedSubjectTokenTypes: string[];
  maxResourceParams: number;
  maxAudienceParams: number;
  idJag: IdJagSettings;
  /** Issuing ID-JAGs for this tenant's users to other authorization servers (issuance-settings.ts). */
  idJagIssuance: IdJagIssuanceSettings;
  /** RFC 8693 §4.4: with an actor_token, the subject token must carry `may_act` naming the actor. */
  requireMayAct: boolean;
}

export const LIMITS = {
  params: { min: 1, max: 100 },
  maxTokenLifetime: { min: 1, max: 3600 },
  allowedIssuers: 50,
  issuerLength: 2048,
  subjectTokenTypes: 10,
} as const;

/** What a tenant that never changed anything gets: token exchange off. */
export const DEFAULT_TOKEN_EXCHANGE_SETTINGS: TokenExchangeSettings = Object.freeze({
  enabled: false,
  allowedSubjectTokenTypes: [TOKEN_TYPE_ACCESS_TOKEN],
  maxResourceParams: 10,
  maxAudienceParams: 10,
  idJag: Object.freeze({
    enabled: false,
    allowedIssuers: [],
    maxTokenLifetime: 300,
    includeTenantClaim: false,
    requireConfidentialClient: true,
  }),
  idJagIssuance: DEFAULT_ISSUANCE,
  requireMayAct: false,
});

/** Host names that never name a public service (RFC 6761, RFC 6762, RFC 8375). */
const NON_PUBLIC_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.invalid'];

/**
 * Why `value` is not acceptable as a trusted ID-JAG issuer identifier, or undefined. It must
 * be a public https URL without credentials, query or fragment (interface specification,
 * "Token exchange settings"); an IP literal must be public. With `allowLoopback` (the operator
 * setting IAM_OUTBOUND_ALLOW_LOOPBACK) https://127.0.0.1:port and https://[::1]:port pass, for tests.
 */
export function issuerProblem(value: string, allowLoopback: boolean, ownIssuer?: string): string | undefined {
  // This service's own issuer is verified with its own keys, never fetched (docs/token-exchange.md,
  // "Own-issuer ID-JAGs"), so its scheme and host are not an SSRF question even when http in tests.
  if (ownIssuer !== undefined && value === ownIssuer) return undefined;
  if (value.length > LIMITS.issuerLength) return `must be at most ${LIMITS.issuerLength} characters`;
  if (/\s/.test(value)) return 'must not contain whitespace';
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (u.protocol !== 'https:') return 'must be an https URL';
  if (u.username || u.password || /^https:\/\/[^/]*@/i.test(value)) return 'must not contain credentials';
  if (u.search || value.includes('?')) return 'must not contain a query';
  if (u.hash || value.includes('#')) return 'must not contain a fragment';
  const host = u.hostname.toLowerCase();
  if (isIpLiteral(host)) {
    const cls = classifyAddress(host);
    if (cls && !(cls === 'loopback' && allowLoopback)) return `must not name a ${cls} address (${host})`;
    return undefined;
  }
  if (host === 'localhost' || NON_PUBLIC_SUFFIXES.some((s) => host.endsWith(s))) {
    return `must name a public host (${host} is not)`;
  }
  if (!host.includes('.')) return `must name a fully qualified public host (${host} is a single label)`;
  return undefined;
}

const bounded = (name: string, min: number, max: number) =>
  z
    .number({
      error: (iss) =>
        typeof iss.input === 'number' ? `must be a whole number from ${min} to ${max}` : 'must be an integer',
    })
    .int(`must be a whole number from ${min} to ${max}`)
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`)
    .describe(name);

/**
 * The PUT body: every field optional (the interface specification's "all fields optional").
 * Extensible per the specification: unknown fields are tolerated, not stored, and named in
 * the response's `note`. Built per daemon because issuer validation follows IAM_OUTBOUND_ALLOW_LOOPBACK.
 */
export function tokenExchangeSettingsInput(allowLoopback: boolean, ownIssuer?: string) {
  const tokenType = z
    .enum(TOKEN_TYPE_NAMES as [string, ...string[]], {
      error: (iss) => `unsupported token type ${JSON.stringify(iss.input)}; use one of: ${TOKEN_TYPE_NAMES.join(', ')}`,
    })
    .transform((v) => canonicalTokenType(v)!);
  const issuer = z.string({ error: 'must be a string' }).superRefine((v, ctx) => {
    const problem = issuerProblem(v, allowLoopback, ownIssuer);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
  return z.looseObject({
    enabled: z.boolean().optional().describe('Token exchange (RFC 8693) at POST /token for this tenant.'),
    allowedSubjectTokenTypes: z
      .array(tokenType)
      .max(LIMITS.subjectTokenTypes)
      .optional()
      .describe(
        'Accepted subject_token_type values; short names (access_token, id_token, id-jag) or URNs. Stored as URNs.',
      ),
    maxResourceParams: bounded(
      'Most `resource` parameters in one request (1 to 100).',
      LIMITS.params.min,
      LIMITS.params.max,
    ).optional(),
    maxAudienceParams: bounded(
      'Most `audience` parameters in one request (1 to 100).',
      LIMITS.params.min,
      LIMITS.params.max,
    ).optional(),
    idJag: z
      .looseObject(
        {
          enabled: z.boolean().optional(),
          allowedIssuers: z
            .array(issuer)
            .max(LIMITS.allowedIssuers, `must list at most ${LIMITS.allowedIssuers} issuers`)
            .optional()
            .describe('Trusted issuer identifiers: public https URLs without credentials, query or fragment.'),
          maxTokenLifetime: bounded(
            'Cap of an issued token lifetime, seconds (1 to 3600; never above the 600 s access token lifetime).',
            LIMITS.maxTokenLifetime.min,
            LIMITS.maxTokenLifetime.max,
          ).optional(),
          includeTenantClaim: z.boolean().optional(),
          requireConfidentialClient: z.boolean().optional(),
        },
        { error: 'must be an object' },
      )
      .optional(),
    idJagIssuance: issuanceInput(ownIssuer ?? '').optional(),
    requireMayAct: z
      .boolean()
      .optional()
      .describe('RFC 8693 §4.4: refuse an actor_token unless the subject token carries may_act naming the actor.'),
  });
}

export const TokenExchangeSettingsView = z.looseObject({
  enabled: z.boolean(),
  allowedSubjectTokenTypes: z.array(z.string()),
  maxResourceParams: z.number().int(),
  maxAudienceParams: z.number().int(),
  idJag: z.looseObject({
    enabled: z.boolean(),
    allowedIssuers: z.array(z.string()),
    maxTokenLifetime: z.number().int(),
    includeTenantClaim: z.boolean(),
    requireConfidentialClient: z.boolean(),
  }),
  idJagIssuance: IssuanceView,
  requireMayAct: z.boolean(),
});

export const TokenExchangeSettingsResult = z.object({
  success: z.boolean(),
  settings: TokenExchangeSettingsView,
  note: z.string(),
});

const isInt = (v: unknown, min: number, max: number): v is number =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * The settings in force from a stored document. Tolerant: a field that is missing or malformed
 * (hand-edited rows, older versions) takes its default, which for `enabled` means off.
 */
export function settingsFrom(stored: unknown): TokenExchangeSettings {
  const d = DEFAULT_TOKEN_EXCHANGE_SETTINGS;
  const s = (stored && typeof stored === 'object' ? stored : {}) as Record<string, unknown>;
  const j = (s.idJag && typeof s.idJag === 'object' ? s.idJag : {}) as Record<string, unknown>;
  const types = strings(s.allowedSubjectTokenTypes)
    ? [...new Set(s.allowedSubjectTokenTypes.map(canonicalTokenType).filter((t): t is NonNullable<typeof t> => !!t))]
    : [...d.allowedSubjectTokenTypes];
  return {
    enabled: typeof s.enabled === 'boolean' ? s.enabled : d.enabled,
    allowedSubjectTokenTypes: types,
    maxResourceParams: isInt(s.maxResourceParams, LIMITS.params.min, LIMITS.params.max)
      ? s.maxResourceParams
      : d.maxResourceParams,
    maxAudienceParams: isInt(s.maxAudienceParams, LIMITS.params.min, LIMITS.params.max)
      ? s.maxAudienceParams
      : d.maxAudienceParams,
    idJag: {
      enabled: typeof j.enabled === 'boolean' ? j.enabled : d.idJag.enabled,
      allowedIssuers: strings(j.allowedIssuers) ? [...j.allowedIssuers] : [...d.idJag.allowedIssuers],
      maxTokenLifetime: isInt(j.maxTokenLifetime, LIMITS.maxTokenLifetime.min, LIMITS.maxTokenLifetime.max)
        ? j.maxTokenLifetime
        : d.idJag.maxTokenLifetime,
      includeTenantClaim: typeof j.includeTenantClaim === 'boolean' ? j.includeTenantClaim : d.idJag.includeTenantClaim,
      requireConfidentialClient:
        typeof j.requireConfidentialClient === 'boolean'
          ? j.requireConfidentialClient
          : d.idJag.requireConfidentialClient,
    },
    idJagIssuance: issuanceFrom(s.idJagIssuance),
    requireMayAct: typeof s.requireMayAct === 'boolean' ? s.requireMayAct : d.requireMayAct,
  };
}

const KNOWN_TOP = [
  'enabled',
  'allowedSubjectTokenTypes',
  'maxResourceParams',
  'maxAudienceParams',
  'idJag',
  'idJagIssuance',
  'requireMayAct',
];
const KNOWN_ID_JAG = [
  'enabled',
  'allowedIssuers',
  'maxTokenLifetime',
  'includeTenantClaim',
  'requireConfidentialClient',
];

export interface TokenExchangeSettingsUpdate {
  success: true;
  settings: TokenExchangeSettings;
  note: string;
}

export class TokenExchangeSettingsService {
  readonly input: ReturnType<typeof tokenExchangeSettingsInput>;

  constructor(
    private readonly ds: Database,
    opts: { allowLoopback: boolean; ownIssuer?: string },
  ) {
    this.input = tokenExchangeSettingsInput(opts.allowLoopback, opts.ownIssuer);
  }

  /** The settings in force for a tenant, or undefined when the tenant does not exist. */
  async forTenant(tenantId: string): Promise<TokenExchangeSettings | undefined> {
    const settings = await new TenantRepository(this.ds).settings(tenantId);
    if (settings === undefined) return undefined;
    return settingsFrom(settings?.tokenExchange);
  }

  async get(tenantId: string): Promise<TokenExchangeSettings> {
    const s = await this.forTenant(tenantId);
    if (!s) throw notFound(`Tenant ${tenantId}`);
    return s;
  }

  /** Validates, merges with the stored settings, stores and audits in one transaction. */
  async update(tenantId: string, raw: unknown, actor: Actor): Promise<TokenExchangeSettingsUpdate> {
    const input = parseInput(this.input, raw, 'body');
    const ignored = [
      ...Object.keys(input).filter((k) => !KNOWN_TOP.includes(k)),
      ...Object.keys(input.idJag ?? {})
        .filter((k) => !KNOWN_ID_JAG.includes(k))
        .map((k) => `idJag.${k}`),
    ];
    const settings = await updateSettingsSection(
      this.ds,
      { tenantId, section: 'tokenExchange', action: 'tenant.token_exchange_settings.update', actor },
      (doc) => {
        const before = settingsFrom(doc.tokenExchange);
        const after: TokenExchangeSettings = {
          enabled: input.enabled ?? before.enabled,
          allowedSubjectTokenTypes: input.allowedSubjectTokenTypes
            ? [...new Set(input.allowedSubjectTokenTypes)]
            : before.allowedSubjectTokenTypes,
          maxResourceParams: input.maxResourceParams ?? before.maxResourceParams,
          maxAudienceParams: input.maxAudienceParams ?? before.maxAudienceParams,
          idJag: {
            enabled: input.idJag?.enabled ?? before.idJag.enabled,
            allowedIssuers: input.idJag?.allowedIssuers
              ? [...new Set(input.idJag.allowedIssuers)]
              : before.idJag.allowedIssuers,
            maxTokenLifetime: input.idJag?.maxTokenLifetime ?? before.idJag.maxTokenLifetime,
            includeTenantClaim: input.idJag?.includeTenantClaim ?? before.idJag.includeTenantClaim,
            requireConfidentialClient: input.idJag?.requireConfidentialClient ?? before.idJag.requireConfidentialClient,
          },
          idJagIssuance: mergeIssuance(before.idJagIssuance, input.idJagIssuance),
          requireMayAct: input.requireMayAct ?? before.requireMayAct,
        };
        // Checked on the merged result: ID-JAG on with nobody trusted is a mistake, not a policy.
        if (after.idJag.enabled && after.idJag.allowedIssuers.length === 0) {
          const message = 'must name at least one issuer when idJag.enabled is true';
          throw badRequest(`body.idJag.allowedIssuers: ${message}`, [{ field: 'body.idJag.allowedIssuers', message }]);
        }
        return { before, after };
      },
    );
    return { success: true, settings, note: noteFor(tenantId, settings, ignored) };
  }
}

/** One human-readable paragraph: where it applies, and anything that will surprise. */
export function noteFor(tenantId: string, s: TokenExchangeSettings, ignored: string[] = []): string {
  const parts = [`Stored for tenant ${tenantId}; every daemon applies it to the next token request.`];
  if (!s.enabled) parts.push('Token exchange is disabled: POST /token answers unsupported_grant_type for it.');
  const jagListed = s.allowedSubjectTokenTypes.includes(TOKEN_TYPE_ID_JAG);
  if (s.idJag.enabled && !jagListed)
    parts.push(`idJag.enabled has no effect until ${TOKEN_TYPE_ID_JAG} is in allowedSubjectTokenTypes.`);
  if (jagListed && !s.idJag.enabled)
    parts.push('ID-JAG subject tokens are listed but idJag.enabled is false, so they are refused.');
  if (s.idJag.maxTokenLifetime > ACCESS_TOKEN_TTL_S)
    parts.push(
      `Tokens never outlive the ${ACCESS_TOKEN_TTL_S} s access token lifetime, whatever idJag.maxTokenLifetime says.`,
    );
  if (s.idJagIssuance.enabled && !s.enabled)
    parts.push('idJagIssuance.enabled has no effect while token exchange is disabled.');
  if (ignored.length) parts.push(`Ignored unknown field(s): ${ignored.join(', ')}.`);
  return parts.join(' ');
}
