/**
 * A tenant's policy for client ID metadata documents (docs/client-metadata-documents.md): whether
 * a client may name itself by a document URL at this tenant, and which hosts may serve one.
 */
import { z } from 'zod';

/** An exact host name, or `*.` and a suffix (any host below it, not the suffix itself). */
const hostPattern = z
  .string()
  .max(253)
  .regex(
    /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/,
    'must be a lower-case host name (optionally with :port), or *. followed by one',
  );

export const ClientMetadataPolicyInput = z
  .strictObject({
    enabled: z.boolean().describe('Whether clients may use a metadata document URL as client_id at this tenant'),
    allowHosts: z
      .array(hostPattern)
      .max(100)
      .default([])
      .describe('Hosts that may serve documents (exact, or *.suffix); empty: any public host'),
    denyHosts: z
      .array(hostPattern)
      .max(100)
      .default([])
      .describe('Hosts that may not serve documents (exact, or *.suffix); a deny wins over an allow'),
  })
  .describe("A tenant's client ID metadata document policy; PUT replaces it whole");

export type ClientMetadataPolicy = z.output<typeof ClientMetadataPolicyInput>;

export const ClientMetadataPolicyView = z.looseObject({
  tenantId: z.string(),
  policy: z.object({ enabled: z.boolean(), allowHosts: z.array(z.string()), denyHosts: z.array(z.string()) }),
});
