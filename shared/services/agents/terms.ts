/**
 * The terms of an agent grant (docs/agents.md) and the checks on them, apart from the grant's
 * lifecycle (grants.ts): the create and PATCH bodies validated field by field (each failure
 * names its field), RFC 9396 authorization details, every principal's ceiling, the narrowing
 * of a PATCH against what the grantor consented to (narrowing.ts), and the entity tag that
 * If-Match compares (RFC 9110 §13.1.1). Pure functions: nothing here reads or writes storage.
 */
import { ApiError, badRequest } from '../../errors.js';
import {
  AgentGrantImmutableTerms,
  type AgentGrantCeilings,
  type AgentGrantView,
  type Ceiling,
} from '../../schemas/agents.js';
import { widening } from './narrowing.js';

export const AGENT_GRANT_LIMITS = {
  details: 20,
  purpose: 500,
  /** expires_at at most this far after the update (or creation). */
  maxLifetimeMs: 90 * 24 * 3600 * 1000,
  typeLength: 200,
} as const;

/** The terms fixed at creation: a PATCH naming one is refused (create a new grant instead). */
export const IMMUTABLE_FIELDS = Object.keys(AgentGrantImmutableTerms.shape) as (keyof AgentGrantImmutableTerms)[];
const PATCHABLE = ['authorization_details', 'purpose', 'expires_at'];
const CEILING_NAMES = ['updater', 'grantor', 'delegator', 'machine_principal'] as const;

export const bad = (field: string, message: string) => badRequest(`${field}: ${message}`, [{ field, message }]);

/** RFC 9396 §2: an array of objects, each with a `type` string; `actions` (§2.2) a list of strings. */
function parseDetails(v: unknown, field = 'body.authorization_details'): Record<string, unknown>[] {
  if (!Array.isArray(v)) throw bad(field, 'must be an array of objects (RFC 9396 §2)');
  if (v.length < 1) throw bad(field, 'must hold at least one authorization detail');
  if (v.length > AGENT_GRANT_LIMITS.details) throw bad(field, `must hold at most ${AGENT_GRANT_LIMITS.details} items`);
  return v.map((d, i) => {
    if (!d || typeof d !== 'object' || Array.isArray(d)) throw bad(`${field}.${i}`, 'must be an object');
    const o = d as Record<string, unknown>;
    // Own members only: a JSON object's `type` or `actions`, never one inherited from Object.prototype.
    const type = Object.hasOwn(o, 'type') ? o.type : undefined;
    const actions = Object.hasOwn(o, 'actions') ? o.actions : undefined;
    if (typeof type !== 'string' || !type || type.length > AGENT_GRANT_LIMITS.typeLength)
      throw bad(
        `${field}.${i}.type`,
        `must be a string of 1 to ${AGENT_GRANT_LIMITS.typeLength} characters (RFC 9396 §2)`,
      );
    if (actions !== undefined && (!Array.isArray(actions) || !actions.every((a) => typeof a === 'string' && a)))
      throw bad(`${field}.${i}.actions`, 'must be an array of strings (RFC 9396 §2.2)');
    return o;
  });
}

function parsePurpose(v: unknown, field = 'body.purpose'): string | null {
  if (v === null) return null;
  if (typeof v !== 'string') throw bad(field, 'must be a string or null');
  if (v.length > AGENT_GRANT_LIMITS.purpose)
    throw bad(field, `must be at most ${AGENT_GRANT_LIMITS.purpose} characters`);
  return v;
}

/** A deadline after `now` and at most 90 days from it (the interface's bound; ms since the epoch). */
function parseExpiry(v: unknown, now: number, field = 'body.expires_at'): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(field, 'must be an integer (ms since the epoch)');
  if (v <= now) throw bad(field, 'must be in the future');
  if (v > now + AGENT_GRANT_LIMITS.maxLifetimeMs)
    throw new ApiError(400, 'expires_at_too_far', `${field}: must be at most 90 days from now`, {
      details: [{ field, message: 'must be at most 90 days from now' }],
    });
  return v;
}

function parseCeiling(v: unknown, field: string): Ceiling {
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw bad(field, 'must be an object mapping authorization detail types to allowed actions');
  const entries: [string, string[]][] = [];
  for (const [type, actions] of Object.entries(v as Record<string, unknown>)) {
    if (!Array.isArray(actions) || !actions.every((a) => typeof a === 'string' && a))
      throw bad(`${field}.${type}`, 'must be an array of action names (or ["*"] for any)');
    entries.push([type, actions as string[]]);
  }
  // Object.fromEntries defines own properties: a type named `__proto__` stays a key (an
  // assignment would set the prototype instead).
  return Object.fromEntries(entries);
}

/** The first detail a ceiling does not cover, described; undefined when all are covered. */
export function exceeds(ceiling: Ceiling, details: Record<string, unknown>[]): string | undefined {
  // A Map of the ceiling's own entries: a detail type such as `constructor` or `__proto__` is
  // looked up as a key, never found on Object.prototype (that was a TypeError, a 500).
  const allowedByType = new Map(Object.entries(ceiling));
  for (const [i, d] of details.entries()) {
    const type = d.type as string;
    const allowed = allowedByType.get(type);
    if (!Array.isArray(allowed)) return `authorization_details.${i}: type ${JSON.stringify(type)} is not within it`;
    if (allowed.includes('*')) continue;
    const actions = (Object.hasOwn(d, 'actions') ? (d.actions as string[] | undefined) : undefined) ?? [];
    // A detail without actions asks for every action of its type (RFC 9396 §2.2): only `*` covers it.
    if (actions.length === 0)
      return `authorization_details.${i}: all actions of ${JSON.stringify(type)} are not within it`;
    const over = actions.filter((a) => !allowed.includes(a));
    if (over.length)
      return `authorization_details.${i}: actions ${over.join(', ')} of ${JSON.stringify(type)} are not within it`;
  }
  return undefined;
}

export function checkCeilings(c: AgentGrantCeilings, details: Record<string, unknown>[]): void {
  for (const name of CEILING_NAMES) {
    const ceiling = c[name];
    if (!ceiling) continue;
    const why = exceeds(ceiling, details);
    if (why)
      throw new ApiError(
        403,
        `${name}_ceiling_exceeded`,
        `The ${name.replace('_', '-')} ceiling is exceeded: ${why}.`,
        {
          ceiling: name,
        },
      );
  }
}

export function checkConsented(consented: Record<string, unknown>[], details: Record<string, unknown>[]): void {
  const w = widening(consented, details);
  if (!w) return;
  const field = `body.authorization_details.${w.index}.${w.member}`;
  throw new ApiError(403, 'consented_terms_exceeded', `${field}: ${w.message}; a PATCH may only narrow the grant.`, {
    details: [{ field, message: w.message }],
  });
}

/** The PATCH body, validated: each field named when it fails. */
export function parsePatch(raw: unknown): {
  details: Record<string, unknown>[] | undefined;
  purpose: string | null | undefined;
  expiresAt: number | undefined;
  now: number;
} {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('body', 'must be a JSON object');
  const b = raw as Record<string, unknown>;
  for (const k of IMMUTABLE_FIELDS)
    if (Object.hasOwn(b, k))
      throw new ApiError(400, 'immutable_field', `body.${k}: is immutable; create a new grant to change it`, {
        details: [{ field: `body.${k}`, message: 'is immutable' }],
      });
  if (!PATCHABLE.some((k) => Object.hasOwn(b, k)))
    throw bad('body', `must name at least one of ${PATCHABLE.join(', ')}`);
  const now = Date.now();
  return {
    details: Object.hasOwn(b, 'authorization_details') ? parseDetails(b.authorization_details) : undefined,
    purpose: Object.hasOwn(b, 'purpose') ? parsePurpose(b.purpose) : undefined,
    expiresAt: Object.hasOwn(b, 'expires_at') ? parseExpiry(b.expires_at, now) : undefined,
    now,
  };
}

/** The terms a create body names, validated in the order a caller reads them; `now` the creation time. */
export type NewGrantTerms = Pick<
  AgentGrantView,
  | 'client_id'
  | 'grantor_user_id'
  | 'delegator_user_id'
  | 'machine_principal_id'
  | 'authorization_details'
  | 'purpose'
  | 'expires_at'
  | 'ceilings'
> & { immutable_terms: AgentGrantImmutableTerms };

/** The POST body, validated: each field named when it fails; the details within every ceiling. */
export function parseCreate(raw: unknown, now: number): NewGrantTerms {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('body', 'must be a JSON object');
  const b = raw as Record<string, unknown>;
  const str = (k: string, required: boolean): string | null => {
    const v = b[k];
    if (v === undefined || v === null) {
      if (required) throw bad(`body.${k}`, 'is required');
      return null;
    }
    if (typeof v !== 'string' || !v || v.length > 128)
      throw bad(`body.${k}`, 'must be a string of 1 to 128 characters');
    return v;
  };
  const clientId = str('client_id', true)!;
  const grantor = str('grantor_user_id', true)!;
  const delegator = str('delegator_user_id', false);
  const machine = str('machine_principal_id', false);
  const details = parseDetails(b.authorization_details);
  const purpose = b.purpose === undefined ? null : parsePurpose(b.purpose);
  const expiresAt = parseExpiry(b.expires_at, now);
  const c = b.ceilings as Record<string, unknown> | undefined;
  if (!c || typeof c !== 'object' || Array.isArray(c)) throw bad('body.ceilings', 'is required (an object)');
  const ceilings: AgentGrantCeilings = {
    updater: parseCeiling(c.updater, 'body.ceilings.updater'),
    grantor: parseCeiling(c.grantor, 'body.ceilings.grantor'),
  };
  if (delegator) ceilings.delegator = parseCeiling(c.delegator, 'body.ceilings.delegator');
  else if (c.delegator !== undefined) throw bad('body.ceilings.delegator', 'needs delegator_user_id');
  if (machine) ceilings.machine_principal = parseCeiling(c.machine_principal, 'body.ceilings.machine_principal');
  else if (c.machine_principal !== undefined)
    throw bad('body.ceilings.machine_principal', 'needs machine_principal_id');
  const scopes = b.scopes === undefined ? [] : b.scopes;
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string'))
    throw bad('body.scopes', 'must be an array of strings');
  checkCeilings(ceilings, details);
  return {
    client_id: clientId,
    grantor_user_id: grantor,
    delegator_user_id: delegator,
    machine_principal_id: machine,
    authorization_details: details,
    purpose,
    expires_at: expiresAt,
    immutable_terms: {
      task_set: b.task_set ?? null,
      scope_policy: b.scope_policy ?? null,
      resolved_tools: b.resolved_tools ?? null,
      permissions: b.permissions ?? null,
      scopes,
    },
    ceilings,
  };
}

/**
 * The grant's strong entity tag (RFC 9110 §8.8.3): its generation (raised by every PATCH, the
 * only change to its terms) and whether its current consent version is consented (the one
 * other part of its representation that changes, `consent_required`).
 */
export function agentGrantEtag(generation: number, consented: boolean): string {
  return `"g${generation}-c${consented ? 1 : 0}"`;
}

/**
 * RFC 9110 §13.1.1: `*` matches any current representation; otherwise the header is a list of
 * entity tags, compared strongly (a weak tag `W/"…"` never matches). A header that is not a
 * valid list matches nothing.
 */
export function ifMatchSatisfied(header: string, current: string): boolean {
  const h = header.trim();
  if (h === '*') return true;
  const tags = h.match(/(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"/g) ?? [];
  return tags.some((t) => !t.startsWith('W/') && t === current);
}
