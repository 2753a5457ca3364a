import { z } from 'zod';
import { EMAIL_STRATEGIES, MAX_PROVIDER_ORDER } from '../services/mail/types.js';

/** The interface specification's "Email notifier provider entry" (extensible; all fields optional there). */
export const EmailProviderEntryView = z.looseObject({
  id: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  category: z.string().optional(),
  configSource: z.string().optional(),
  configured: z.boolean().optional(),
  missingRequiredFields: z.array(z.string()).optional(),
  defaultFrom: z.string().optional(),
});

/**
 * Body of PATCH /api/admin/tenants/{tenantId}/email-settings. Built per daemon because the
 * accepted provider ids are the providers this build has (they appear as an enum in OpenAPI).
 */
export function emailSettingsInput(knownProviderIds: readonly string[]) {
  const known = knownProviderIds.join(', ');
  return z.strictObject({
    strategy: z
      .enum(EMAIL_STRATEGIES, {
        error: (iss) => (iss.input === undefined ? 'is required' : `must be one of: ${EMAIL_STRATEGIES.join(', ')}`),
      })
      .describe('Routing strategy: providers are tried in order, the first that accepts the message wins.'),
    providerOrder: z
      .array(
        z.enum(knownProviderIds as [string, ...string[]], {
          error: (iss) => `unknown provider ${JSON.stringify(iss.input)}; known providers: ${known}`,
        }),
        { error: (iss) => (iss.input === undefined ? 'is required' : 'must be an array of provider ids') },
      )
      .min(1, 'must name at least one provider')
      .max(MAX_PROVIDER_ORDER, `must name at most ${MAX_PROVIDER_ORDER} providers`)
      .superRefine((ids, ctx) => {
        const seen = new Set<string>();
        ids.forEach((id, i) => {
          if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `provider "${id}" is listed twice` });
          seen.add(id);
        });
      })
      .describe('Provider ids in the order they are tried.'),
  });
}

export const EmailSettingsView = z.object({
  tenantId: z.string(),
  settings: z.looseObject({ strategy: z.string(), providerOrder: z.array(z.string()) }),
  providers: z.array(EmailProviderEntryView),
});
