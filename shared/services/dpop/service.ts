/**
 * DPoP (RFC 9449, docs/dpop.md): a tenant's policy (the `dpop` section of its settings), the
 * server-provided nonces (nonce.ts), and the one check every endpoint runs on a proof: the
 * proof itself (proof.ts, §4.3) and then its `jti` spent in the replay store every daemon
 * shares (§11.1), the last step, so a refused proof spends nothing.
 */
import { createHash } from 'node:crypto';
import type { Database } from '../../db/index.js';
import { DpopProofs, TenantRepository } from '../../repositories/index.js';
import { DpopPolicyInput } from '../../schemas/dpop.js';
import { parseInput } from '../../schemas/validate.js';
import type { Actor } from '../audit.js';
import { PolicySection, sectionEtag } from '../tenant-settings.js';
import { DpopNonces } from './nonce.js';
import { DPOP_IAT_WINDOW_S, DpopProofError, verifyProof, type VerifiedProof } from './proof.js';

export type StoredDpopPolicy = DpopPolicyInput;

export interface DpopPolicyView {
  tenantId: string;
  policy: StoredDpopPolicy;
  effective: { requireNonce: boolean; requireDpop: boolean };
}

/** The stored section, keeping only well-formed fields: a malformed one reads as none. */
export function dpopPolicyOf(section: unknown): StoredDpopPolicy {
  if (!section || typeof section !== 'object' || Array.isArray(section)) return {};
  const raw = section as Record<string, unknown>;
  const out: StoredDpopPolicy = {};
  for (const k of ['requireNonce', 'requireDpop'] as const) if (typeof raw[k] === 'boolean') out[k] = raw[k];
  return out;
}

function viewOf(tenantId: string, policy: StoredDpopPolicy): { view: DpopPolicyView; etag: string } {
  return {
    view: {
      tenantId,
      policy,
      effective: { requireNonce: policy.requireNonce ?? false, requireDpop: policy.requireDpop ?? false },
    },
    etag: sectionEtag(policy),
  };
}

/**
 * How long a tenant's policy is kept in memory, ms: every token request reads it, and a change
 * made at another daemon reaches this one within this time (at this daemon, at once).
 */
const POLICY_CACHE_MS = 5_000;

export class DpopService {
  /** The validated body of PUT …/dpop-policy. */
  readonly input = DpopPolicyInput;
  readonly nonces: DpopNonces;
  private readonly cache = new Map<string, { at: number; policy: StoredDpopPolicy }>();
  private readonly section: PolicySection<StoredDpopPolicy>;

  constructor(
    private readonly ds: Database,
    secretKey: string,
    /** The issuer: the base of every `htu` this service expects. */
    private readonly issuer: string,
  ) {
    this.nonces = new DpopNonces(secretKey);
    this.section = new PolicySection(ds, {
      section: 'dpop',
      action: 'tenant.dpop_policy.update',
      what: 'DPoP policy',
      of: dpopPolicyOf,
    });
  }

  /** The tenant's policy, from a cache of a few seconds; none for a tenant that does not exist. */
  async policy(tenantId: string): Promise<StoredDpopPolicy> {
    const hit = this.cache.get(tenantId);
    if (hit && Date.now() - hit.at < POLICY_CACHE_MS) return hit.policy;
    const settings = await new TenantRepository(this.ds).settings(tenantId);
    const policy = dpopPolicyOf(settings?.dpop);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(tenantId, { at: Date.now(), policy });
    return policy;
  }

  async view(tenantId: string): Promise<{ view: DpopPolicyView; etag: string }> {
    return viewOf(tenantId, await this.section.read(tenantId));
  }

  /** Replaces the policy (PUT), audited as `tenant.dpop_policy.update`; If-Match as the other sections. */
  async update(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ view: DpopPolicyView; etag: string }> {
    const next = dpopPolicyOf(parseInput(DpopPolicyInput, input, opts.where ?? ''));
    const after = await this.section.replace(tenantId, next, actor, opts.ifMatch);
    this.cache.delete(tenantId);
    return viewOf(tenantId, after);
  }

  /**
   * Checks the proof of a request to `path` of this service for a tenant (§4.3, and the nonce of
   * §8 when the tenant requires one), then spends its `jti` (§11.1). Throws DpopProofError.
   * `accessToken`: the token presented with the proof at a resource (§7.1: `ath`).
   */
  async check(p: {
    tenantId: string;
    header: string | string[] | undefined;
    method: string;
    path: string;
    accessToken?: string;
  }): Promise<VerifiedProof> {
    const policy = await this.policy(p.tenantId);
    const proof = await verifyProof({
      header: p.header,
      htm: p.method,
      htu: this.issuer + p.path,
      accessToken: p.accessToken,
      nonce: { required: policy.requireNonce === true, valid: (n) => this.nonces.valid(n) },
    });
    // Kept until the proof's iat leaves the window; one key per (key, jti), across tenants.
    const key = createHash('sha256').update(proof.jkt).update('\0').update(proof.jti).digest('base64url');
    if (!(await new DpopProofs(this.ds).record(key, (proof.iat + DPOP_IAT_WINDOW_S + 1) * 1000)))
      throw new DpopProofError('invalid_dpop_proof', 'The DPoP proof was already used (jti).');
    return proof;
  }
}
