/**
 * A protected resource metadata document (RFC 9728 §2) a resource server has this service
 * host for it (docs/mcp.md, "Hosted protected resource metadata"). The members RFC 9728 §2
 * defines are checked by type; other members (an extension's) are kept when they are JSON,
 * bounded by the document's size (MAX_DOCUMENT_BYTES). `signed_metadata` (§2.2) is refused:
 * the service cannot vouch for claims the resource server signed.
 */
import { z } from 'zod';

/** The largest stored document, serialised. */
export const MAX_DOCUMENT_BYTES = 16 * 1024;

const url = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'https:' || u.protocol === 'http:') && !v.includes('#');
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL without a fragment');
const names = z.array(z.string().min(1).max(200)).max(100);

export const ResourceMetadataInput = z
  .looseObject({
    /** RFC 9728 §2: REQUIRED; must be one of the client's resource_identifiers (checked by the service). */
    resource: z.string().min(1).max(2048),
    /** Defaults to [this issuer]. */
    authorization_servers: z.array(url).min(1).max(10).optional(),
    jwks_uri: url.optional(),
    scopes_supported: names.optional(),
    /** RFC 6750's three methods; defaults to ["header"]. */
    bearer_methods_supported: z
      .array(z.enum(['header', 'body', 'query']))
      .max(3)
      .optional(),
    resource_signing_alg_values_supported: z
      .array(
        z
          .string()
          .min(1)
          .max(20)
          .refine((a) => a !== 'none', '"none" is not a signing algorithm (RFC 9728 §2)'),
      )
      .max(20)
      .optional(),
    resource_name: z.string().min(1).max(200).optional(),
    resource_documentation: url.optional(),
    resource_policy_uri: url.optional(),
    resource_tos_uri: url.optional(),
    tls_client_certificate_bound_access_tokens: z.boolean().optional(),
    authorization_details_types_supported: names.optional(),
    dpop_signing_alg_values_supported: names.optional(),
    dpop_bound_access_tokens_required: z.boolean().optional(),
    signed_metadata: z.never({ error: 'signed metadata is not hosted (RFC 9728 §2.2): leave it out' }).optional(),
  })
  .refine((d) => Object.keys(d).length <= 50, { message: 'at most 50 members' });
export type ResourceMetadataInput = z.input<typeof ResourceMetadataInput>;

/** What the admin API answers: the document as served, and where it is served. */
export const ResourceMetadataView = z.object({
  client_id: z.string(),
  /** The public URL: name it in WWW-Authenticate's resource_metadata (RFC 9728 §5.1). */
  url: z.string(),
  /** Whether introspection by this client is strict (turned on when a document is first stored). */
  strict_introspection: z.boolean(),
  document: z.looseObject({ resource: z.string(), authorization_servers: z.array(z.string()) }),
});
export type ResourceMetadataView = z.infer<typeof ResourceMetadataView>;
