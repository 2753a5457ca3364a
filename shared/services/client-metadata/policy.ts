/**
 * A tenant's client ID metadata document policy, `tenants.settings.clientIdMetadataDocuments`
 * (docs/client-metadata-documents.md, "Policy"): off by default; allow and deny lists of hosts.
 * `view` and `update` are the admin API's and the CLI's (the settings-section builder), with a
 * strong ETag over the stored section for If-Match (RFC 9110 §13.1.1).
 */
import { createHash } from 'node:crypto';
import type { Database } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { TenantRepository } from '../../repositories/index.js';
import { ClientMetadataPolicyInput, type ClientMetadataPolicy } from '../../schemas/client-metadata.js';
import { parseInput } from '../../schemas/validate.js';
import type { Actor } from '../audit.js';
import { ifMatchSatisfied } from '../agents/terms.js';
import { canonicalize } from '../federation/jcs.js';
import { updateSettingsSection } from '../tenant-settings.js';

export const POLICY_SECTION = 'clientIdMetadataDocuments';

export interface ClientMetadataPolicyView {
  tenantId: string;
  policy: ClientMetadataPolicy;
}

/** The stored section; anything malformed reads as the default (disabled). */
export function policyOf(section: unknown): ClientMetadataPolicy {
  const r = ClientMetadataPolicyInput.safeParse(section);
  return r.success ? r.data : { enabled: false, allowHosts: [], denyHosts: [] };
}

const matches = (host: string, pattern: string) =>
  pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern;

/**
 * Why the policy refuses a document at `url`, or undefined when it allows it. The host is
 * compared with its port when the URL has one (URL.host). Deny wins; an empty allow list
 * allows any host (the outbound client still refuses private addresses).
 */
export function policyRefusal(policy: ClientMetadataPolicy, url: string): string | undefined {
  if (!policy.enabled) return 'This tenant does not accept client ID metadata documents.';
  const host = new URL(url).host.toLowerCase();
  if (policy.denyHosts.some((p) => matches(host, p)))
    return `This tenant does not accept metadata documents from ${host}.`;
  if (policy.allowHosts.length && !policy.allowHosts.some((p) => matches(host, p)))
    return `This tenant does not accept metadata documents from ${host}.`;
  return undefined;
}

export function policyEtag(p: ClientMetadataPolicy): string {
  return `"${createHash('sha256').update(canonicalize(p)).digest('base64url').slice(0, 32)}"`;
}

const viewOf = (tenantId: string, policy: ClientMetadataPolicy) => ({
  view: { tenantId, policy },
  etag: policyEtag(policy),
});

export class ClientMetadataPolicyService {
  readonly input = ClientMetadataPolicyInput;

  constructor(
    private readonly ds: Database,
    private readonly onChange: () => void = () => {},
  ) {}

  async view(tenantId: string): Promise<{ view: ClientMetadataPolicyView; etag: string }> {
    const tenant = await new TenantRepository(this.ds).get(tenantId);
    if (!tenant) throw notFound(`Tenant ${tenantId}`);
    return viewOf(tenantId, policyOf(tenant.settings?.[POLICY_SECTION]));
  }

  /** Replaces the policy whole, audited as `tenant.client_metadata_policy.update` (before, after). */
  async update(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ view: ClientMetadataPolicyView; etag: string }> {
    const next = parseInput(ClientMetadataPolicyInput, input, opts.where ?? '');
    const after = await updateSettingsSection(
      this.ds,
      { tenantId, section: POLICY_SECTION, action: 'tenant.client_metadata_policy.update', actor },
      (doc) => {
        const before = policyOf(doc[POLICY_SECTION]);
        if (opts.ifMatch !== undefined && !ifMatchSatisfied(opts.ifMatch, policyEtag(before)))
          throw new ApiError(
            412,
            'precondition_failed',
            "If-Match does not match the metadata document policy's current ETag; read it again (RFC 9110 §13.1.1).",
          );
        return { before, after: next };
      },
    );
    this.onChange();
    return viewOf(tenantId, after);
  }
}
