/**
 * Agent grants and agent-safe client metadata (docs/agents.md). The services validate each
 * field and name it; these schemas document the shapes and keep bodies objects. Records the
 * interface marks extensible tolerate extra properties here; the services decide what an
 * unknown or immutable key means.
 */
import { z } from 'zod';

const detail = z.looseObject({
  type: z.string().describe('RFC 9396 §2 authorization detail type'),
  actions: z.array(z.string()).optional(),
});

/** A ceiling: the authorization detail types a principal may grant, each with its allowed actions (`*`: any). */
export const Ceiling = z.record(z.string(), z.array(z.string()));
export type Ceiling = z.output<typeof Ceiling>;

/** Per principal, the ceiling an update is checked against again (docs/agents.md, recertification). */
export const AgentGrantCeilings = z.object({
  updater: Ceiling,
  grantor: Ceiling,
  delegator: Ceiling.optional(),
  machine_principal: Ceiling.optional(),
});
export type AgentGrantCeilings = z.output<typeof AgentGrantCeilings>;

/** The terms fixed at creation (a PATCH naming one is refused): stored together, served flat. */
export const AgentGrantImmutableTerms = z.object({
  task_set: z.unknown(),
  scope_policy: z.unknown(),
  resolved_tools: z.unknown(),
  permissions: z.unknown(),
  scopes: z.array(z.string()),
});
export type AgentGrantImmutableTerms = z.output<typeof AgentGrantImmutableTerms>;

export const AgentGrantIdParam = z.strictObject({
  id: z.string().max(64).describe('an agent grant id, `aag_…`'),
});

export const CreateAgentGrantInput = z.looseObject({
  client_id: z.string().describe("the agent client's client_id"),
  grantor_user_id: z.string(),
  delegator_user_id: z.string().nullable().optional(),
  machine_principal_id: z.string().nullable().optional().describe('a client_id acting as machine principal'),
  authorization_details: z.array(detail).describe('1 to 20 RFC 9396 authorization details'),
  purpose: z.string().nullable().optional().describe('at most 500 characters'),
  expires_at: z.number().int().describe('ms since the epoch; at most 90 days ahead'),
  task_set: z.unknown().optional(),
  scope_policy: z.unknown().optional(),
  resolved_tools: z.unknown().optional(),
  permissions: z.unknown().optional(),
  scopes: z.array(z.string()).optional(),
  ceilings: AgentGrantCeilings.loose().describe(
    'per principal: authorization detail type -> allowed actions (`*`: any)',
  ),
});

export const PatchAgentGrantInput = z.looseObject({
  authorization_details: z.array(detail).optional().describe('at most 20 items'),
  purpose: z.string().nullable().optional().describe('at most 500 characters'),
  expires_at: z.number().optional().describe('ms since the epoch; at most 90 days from the update'),
});

/**
 * The grant as served (admin and account surfaces, `iam agent-grants`): the one declaration of
 * its fields. The service's view is the type inferred here; the repository's row is this shape
 * as stored (shared/repositories/agent-grants.ts). Extensible: a reader ignores members it does
 * not know.
 */
const AgentGrantFields = z.object({
  grant_id: z.string(),
  tenant_id: z.string(),
  client_id: z.string(),
  grantor_user_id: z.string(),
  delegator_user_id: z.string().nullable(),
  machine_principal_id: z.string().nullable(),
  authorization_details: z.array(z.looseObject({})),
  purpose: z.string().nullable(),
  expires_at: z.number().int(),
  status: z.string(),
  generation: z.number().int(),
  consent_version: z.number().int(),
  consent_required: z.boolean(),
  ...AgentGrantImmutableTerms.shape,
  ceilings: AgentGrantCeilings,
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export const AgentGrantView = AgentGrantFields.loose();
export type AgentGrantView = z.output<typeof AgentGrantFields>;

/**
 * What a revoke answers (POST /api/admin/agent-grants/{id}/revoke, docs/agents.md "Revoke"):
 * the grant as served, now `revoked` with its raised generation, and the revocation it queued.
 */
const AgentGrantRevokeFields = AgentGrantFields.extend({
  token_families_pending_revocation: z
    .number()
    .int()
    .describe('unexpired token families of the grant the outbox job will record as revoked'),
  revocation_outbox_id: z.string().describe('the agent_grant.revoke_families outbox entry written with the revoke'),
});
export const AgentGrantRevokeResult = AgentGrantRevokeFields.loose();
export type AgentGrantRevokeResult = z.output<typeof AgentGrantRevokeFields>;

/** The spec's "Agent grant update result" (PATCH). */
const AgentGrantUpdateFields = z.object({
  grant_id: z.string(),
  status: z.literal('active'),
  generation: z.number().int().min(2),
  consent_version: z.number().int().min(2),
  token_families_pending_revocation: z.number().int(),
  revocation_outbox_id: z.string(),
  consent_required: z.boolean(),
});
export const AgentGrantUpdateResult = AgentGrantUpdateFields.loose();
export type AgentGrantUpdateResult = z.output<typeof AgentGrantUpdateFields>;

export const ClientMetadataParam = z.strictObject({
  id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9._~-]+$/, 'must match ^[A-Za-z0-9._~-]+$')
    .describe("the client's client_id (or its id)"),
});

export const AgentClientMetadataInput = z.looseObject({
  client_name: z.string().optional().describe('1 to 200 characters'),
  description: z.string().nullable().optional().describe('at most 1000 characters'),
  logo_uri: z.string().nullable().optional().describe('https, no userinfo or fragment, at most 2048 characters'),
  client_uri: z.string().nullable().optional().describe('https, no userinfo or fragment, at most 2048 characters'),
});

export const AgentClientMetadataResult = z.object({
  client: z.looseObject({
    id: z.string(),
    client_id: z.string(),
    client_name: z.string(),
    description: z.string().nullable(),
    logo_uri: z.string().nullable(),
    client_uri: z.string().nullable(),
  }),
  changed: z.boolean().describe('false when the body matched what was stored (nothing written, nothing audited)'),
});
