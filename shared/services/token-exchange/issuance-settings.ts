/**
 * ID-JAG issuance policy (draft-ietf-oauth-identity-assertion-authz-grant §4.3: the IdP decides
 * whether a client may have an assertion for a given target): which other authorization servers
 * this tenant's users may be asserted to, by which local clients, under which client_id at the
 * target, for which scopes and resources. Kept in `tenants.settings.tokenExchange.idJagIssuance`,
 * beside the consuming side's `idJag` (settings.ts), so the one token exchange settings API
 * carries both. docs/token-exchange.md, "Issuing ID-JAGs".
 */
import { z } from 'zod';

export interface IssuanceClientRule {
  /** The local client that may request the assertion. */
  clientId: string;
  /** Its client_id at the target authorization server (the ID-JAG's `client_id`, draft §3). */
  targetClientId: string;
  /** Scopes it may request at the target; empty: no `scope` may be asked for. */
  scopes: string[];
  /** Resources it may name; absent: any absolute URI (the target decides what it serves). */
  resources?: string[];
}

export interface TrustedAuthorizationServer {
  /** The target's issuer identifier: the request's `audience` and the ID-JAG's `aud`. */
  issuer: string;
  /** When the target is a tenant of this very service: that tenant's id (`aud_tenant`). */
  audTenant?: string;
  clients: IssuanceClientRule[];
}

export interface IdJagIssuanceSettings {
  enabled: boolean;
  /** Lifetime of an issued ID-JAG, seconds. */
  maxLifetime: number;
  trustedAuthorizationServers: TrustedAuthorizationServer[];
}

export const ISSUANCE_LIMITS = {
  maxLifetime: { min: 10, max: 600 },
  servers: 20,
  clients: 50,
  scopes: 50,
  resources: 20,
  length: 2048,
} as const;

export const DEFAULT_ISSUANCE: IdJagIssuanceSettings = Object.freeze({
  enabled: false,
  maxLifetime: 300,
  trustedAuthorizationServers: [],
});

/**
 * Why `value` is not acceptable as a target authorization server's issuer identifier. The
 * service never contacts the target (the client carries the assertion there), so unlike a
 * trusted issuer it need not be a public host: an https URL without credentials, query or
 * fragment (RFC 8414 §2), or exactly this service's own issuer (a tenant of the same service).
 */
export function targetIssuerProblem(value: string, ownIssuer: string): string | undefined {
  if (ownIssuer && value === ownIssuer) return undefined;
  if (value.length > ISSUANCE_LIMITS.length) return `must be at most ${ISSUANCE_LIMITS.length} characters`;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (u.protocol !== 'https:') return 'must be an https URL (or this service’s own issuer)';
  if (u.username || u.password) return 'must not contain credentials';
  if (u.search || value.includes('?')) return 'must not contain a query';
  if (u.hash || value.includes('#')) return 'must not contain a fragment';
  if (/\s/.test(value)) return 'must not contain whitespace';
  return undefined;
}

const text = (max = 256) => z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(max);

export function issuanceInput(ownIssuer: string) {
  const absolute = text(ISSUANCE_LIMITS.length).refine((v) => URL.canParse(v) && !v.includes('#'), {
    message: 'must be an absolute URI without a fragment (RFC 8707 §2)',
  });
  const rule = z.object({
    clientId: text(),
    targetClientId: text(),
    scopes: z
      .array(text().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be a scope token (RFC 6749 §3.3)'))
      .max(ISSUANCE_LIMITS.scopes)
      .default([]),
    resources: z.array(absolute).max(ISSUANCE_LIMITS.resources).optional(),
  });
  const server = z
    .object({
      issuer: z.string({ error: 'must be a string' }).superRefine((v, ctx) => {
        const problem = targetIssuerProblem(v, ownIssuer);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
      audTenant: text(64).optional(),
      clients: z.array(rule).max(ISSUANCE_LIMITS.clients),
    })
    // aud_tenant is this service's tenant hint: meaningless for another server.
    .refine((s) => s.audTenant === undefined || s.issuer === ownIssuer, {
      message: 'audTenant is only for this service’s own issuer',
      path: ['audTenant'],
    });
  return z.object({
    enabled: z.boolean().optional(),
    maxLifetime: z
      .number()
      .int('must be a whole number')
      .min(ISSUANCE_LIMITS.maxLifetime.min)
      .max(ISSUANCE_LIMITS.maxLifetime.max)
      .optional()
      .describe('Lifetime of an issued ID-JAG, seconds (10 to 600; default 300).'),
    trustedAuthorizationServers: z
      .array(server)
      .max(ISSUANCE_LIMITS.servers)
      .refine((list) => new Set(list.map((s) => s.issuer)).size === list.length, {
        message: 'lists an issuer twice',
      })
      .optional(),
  });
}

export const IssuanceView = z.object({
  enabled: z.boolean(),
  maxLifetime: z.number().int(),
  trustedAuthorizationServers: z.array(
    z.object({
      issuer: z.string(),
      audTenant: z.string().optional(),
      clients: z.array(
        z.object({
          clientId: z.string(),
          targetClientId: z.string(),
          scopes: z.array(z.string()),
          resources: z.array(z.string()).optional(),
        }),
      ),
    }),
  ),
});

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** The policy in force from a stored document; anything malformed is left out (refuses more, never less). */
export function issuanceFrom(stored: unknown): IdJagIssuanceSettings {
  const s = (stored && typeof stored === 'object' ? stored : {}) as Record<string, unknown>;
  const lifetime = s.maxLifetime;
  const servers = Array.isArray(s.trustedAuthorizationServers) ? s.trustedAuthorizationServers : [];
  return {
    enabled: typeof s.enabled === 'boolean' ? s.enabled : DEFAULT_ISSUANCE.enabled,
    maxLifetime:
      Number.isInteger(lifetime) &&
      (lifetime as number) >= ISSUANCE_LIMITS.maxLifetime.min &&
      (lifetime as number) <= ISSUANCE_LIMITS.maxLifetime.max
        ? (lifetime as number)
        : DEFAULT_ISSUANCE.maxLifetime,
    trustedAuthorizationServers: servers
      .filter(
        (x): x is Record<string, unknown> => !!x && typeof x === 'object' && str((x as { issuer?: unknown }).issuer),
      )
      .map((x) => ({
        issuer: x.issuer as string,
        ...(str(x.audTenant) ? { audTenant: x.audTenant } : {}),
        clients: (Array.isArray(x.clients) ? (x.clients as Record<string, unknown>[]) : [])
          .filter((c) => c && str(c.clientId) && str(c.targetClientId))
          .map((c) => ({
            clientId: c.clientId as string,
            targetClientId: c.targetClientId as string,
            scopes: strings(c.scopes) ? [...c.scopes] : [],
            ...(strings(c.resources) ? { resources: [...c.resources] } : {}),
          })),
      })),
  };
}

/** Merges a validated PUT fragment into the stored policy: fields left out keep their value; arrays are replaced. */
export function mergeIssuance(
  before: IdJagIssuanceSettings,
  input: z.infer<ReturnType<typeof issuanceInput>> | undefined,
): IdJagIssuanceSettings {
  return {
    enabled: input?.enabled ?? before.enabled,
    maxLifetime: input?.maxLifetime ?? before.maxLifetime,
    trustedAuthorizationServers: input?.trustedAuthorizationServers
      ? issuanceFrom({ trustedAuthorizationServers: input.trustedAuthorizationServers }).trustedAuthorizationServers
      : before.trustedAuthorizationServers,
  };
}
