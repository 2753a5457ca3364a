/**
 * The built-in platform plugins (docs/plugins.md). Each has an id, a name, a description, a
 * category and a zod config schema: the schema's non-optional fields are the required ones
 * (reported in `missingRequiredFields` until set), and `secretFields` names the fields stored
 * sealed and never echoed in full. A plugin with `provisioning` is set up by a job after it is
 * enabled (an operation that goes `pending` → `succeeded` | `failed`).
 */
import { z } from 'zod';
import { checkOutboundUrl, OutboundError } from '../../net/outbound.js';

export const WEBHOOK_EMAIL_PLUGIN = 'webhook-email';
export const AUDIT_WEBHOOK_PLUGIN = 'audit-webhook';
/** The outbox kind of the audit webhook's deliveries. */
export const AUDIT_WEBHOOK_OUTBOX_KIND = 'audit-webhook';
/** The audit webhook's provisioning: one signed verification delivery to the configured URL. */
export const VERIFICATION_DELIVERY = 'verification_delivery';

export interface PluginField {
  name: string;
  required: boolean;
  secret: boolean;
}

export interface PluginDefinition {
  id: string;
  name: string;
  description: string;
  category: string;
  /** The full config: non-optional fields are required before the plugin can be enabled. */
  schema: z.ZodObject;
  secretFields: readonly string[];
  /** Set: enabling starts a provisioning operation of this kind. */
  provisioning?: { kind: string };
}

/** Shortest signing secret accepted: 128 bits of base64 or hex text. */
export const MIN_SECRET_CHARS = 24;

function webhookUrl(allowLoopback: boolean) {
  return z
    .string()
    .max(2048, 'must be at most 2048 characters')
    .superRefine((raw, ctx) => {
      // The same rule as every operator-given outbound URL (shared/net/outbound.ts): https,
      // no credentials, no fragment, no special-purpose IP literal.
      try {
        checkOutboundUrl(raw, { allowLoopback });
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: e instanceof OutboundError ? e.message : 'is not a valid URL' });
      }
    });
}

const secret = (what: string) =>
  z
    .string()
    .min(MIN_SECRET_CHARS, `must be at least ${MIN_SECRET_CHARS} characters`)
    .max(512, 'must be at most 512 characters')
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .describe(what);

/** The plugins this build ships, in listing order. */
export function builtinPlugins(opts: { allowLoopback: boolean }): PluginDefinition[] {
  const url = webhookUrl(opts.allowLoopback);
  return [
    {
      id: WEBHOOK_EMAIL_PLUGIN,
      name: 'Webhook email provider',
      description:
        'An email notifier provider that POSTs each message as signed JSON to an HTTPS endpoint; it joins the ' +
        "tenant's email provider order (PATCH /api/admin/tenants/{tenantId}/email-settings) once enabled.",
      category: 'email',
      schema: z.strictObject({
        url: url.describe('HTTPS endpoint that receives each message; any 2xx answer means accepted'),
        signingSecret: secret('HMAC-SHA256 key for the X-IAM-Signature header'),
        bearerToken: secret('Sent as Authorization: Bearer; optional').optional(),
        from: z.email('must be an email address').max(254).optional().describe('Sender address put in each message'),
        timeoutMs: z.number().int().min(1000).max(30_000).optional().describe('Whole-request timeout (1000 to 30000)'),
      }),
      secretFields: ['signingSecret', 'bearerToken'],
    },
    {
      id: AUDIT_WEBHOOK_PLUGIN,
      name: 'Audit event webhook',
      description:
        'Delivers every audit event of the tenant (or, at platform level, of every tenant without its own setting) ' +
        'to a SIEM endpoint as signed JSON batches, through the outbox: written in the transaction of the event, ' +
        'retried with backoff.',
      category: 'audit',
      schema: z.strictObject({
        url: url.describe('HTTPS endpoint that receives batches of audit events; any 2xx answer means accepted'),
        signingSecret: secret('HMAC-SHA256 key for the X-IAM-Signature header'),
        bearerToken: secret('Sent as Authorization: Bearer; optional').optional(),
        batchSize: z.number().int().min(1).max(100).optional().describe('Events per request (1 to 100, default 50)'),
      }),
      secretFields: ['signingSecret', 'bearerToken'],
      provisioning: { kind: VERIFICATION_DELIVERY },
    },
  ];
}

/** The fields of a plugin's schema: required (non-optional) and secret. */
export function fieldsOf(def: PluginDefinition): PluginField[] {
  return Object.entries(def.schema.shape).map(([name, s]) => ({
    name,
    required: !(s as z.ZodType).safeParse(undefined).success,
    secret: def.secretFields.includes(name),
  }));
}
