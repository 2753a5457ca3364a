import { z } from 'zod';
import { tenantId } from './common.js';

/** Most config fields one request may set or remove (the largest plugin has five). */
export const MAX_CONFIG_FIELDS = 32;

export const PluginIdParam = z.strictObject({
  id: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9-]+$/, 'must be a plugin id (lowercase letters, digits and hyphens)')
    .describe('Plugin id, e.g. webhook-email or audit-webhook'),
});

const scopeTenant = tenantId
  .optional()
  .describe('The tenant whose setting to change; absent: the platform-level setting (needs iam.platform).');

/** Body of PUT …/enable and …/disable. */
export const PluginScopeBody = z.strictObject({ tenant_id: scopeTenant });

/** Body of PUT …/config: fields to set (validated by the plugin's schema) or remove (null). */
export const PluginConfigBody = z.strictObject({
  tenant_id: scopeTenant,
  config: z
    .record(z.string().max(64), z.unknown(), { error: 'must be an object of config fields' })
    .refine((c) => Object.keys(c).length <= MAX_CONFIG_FIELDS, `must have at most ${MAX_CONFIG_FIELDS} fields`)
    .describe('Config fields to set; null removes a field; fields left out keep their value. Partial is allowed.'),
});

export const PluginScopeQuery = z.strictObject({
  tenant_id: tenantId
    .optional()
    .describe("The tenant whose state to show; absent: the platform's (iam.platform) or the token's own tenant."),
});

export const ProvisioningView = z.looseObject({ operationId: z.string(), state: z.string(), kind: z.string() });

/** The interface specification's Plugin state result (extensible), with the masked config. */
export const PluginStateView = z.looseObject({
  success: z.boolean(),
  pluginId: z.string(),
  tenantId: z.string().nullable(),
  enabled: z.boolean(),
  configSource: z.string(),
  configured: z.boolean(),
  missingRequiredFields: z.array(z.string()),
  provisioning: ProvisioningView.optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});

export const PluginInfoView = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  fields: z.array(z.looseObject({ name: z.string(), required: z.boolean(), secret: z.boolean() })),
  provisioningKind: z.string().nullable(),
});

export const PluginDetailView = PluginStateView.extend({ plugin: PluginInfoView });

export const PluginListView = z.looseObject({ tenantId: z.string().nullable(), plugins: z.array(PluginDetailView) });
