import { z } from 'zod';
import { GRANT_TYPES, displayName, email, redirectUri, scopeToken } from './common.js';

export const CreateTenantInput = z.strictObject({
  name: displayName,
  /** Whether an unknown address that proves it owns its mailbox becomes a user. */
  allow_signup: z.boolean().default(false),
});
export type CreateTenantInput = z.infer<typeof CreateTenantInput>;

export const CreateClientInput = z.strictObject({
  name: displayName,
  redirect_uris: z.array(redirectUri).max(50).default([]),
  grant_types: z.array(z.enum(GRANT_TYPES)).max(10).default(['authorization_code', 'refresh_token']),
  scopes: z.array(scopeToken).max(100).default(['openid', 'profile', 'email']),
  audiences: z.array(z.string().min(1).max(2048)).max(100).default([]),
  public: z.boolean().default(false),
  first_party: z.boolean().default(false),
  /** As a resource server: the audiences (RFC 8707 resource identifiers) this client serves. */
  resource_identifiers: z.array(z.string().min(1).max(2048)).max(100).default([]),
  /** Introspection by this client answers active only for tokens whose audience it serves. */
  strict_introspection: z.boolean().default(false),
}).superRefine((c, ctx) => {
  // RFC 6749 §4.4: client_credentials needs a client that can authenticate.
  if (c.public && c.grant_types.includes('client_credentials')) {
    ctx.addIssue({ code: 'custom', path: ['grant_types'], message: 'a public client cannot use client_credentials' });
  }
  if (c.strict_introspection && c.resource_identifiers.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['resource_identifiers'], message: 'strict introspection needs at least one resource identifier' });
  }
  if (c.grant_types.includes('authorization_code') && c.redirect_uris.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['redirect_uris'], message: 'the authorization_code grant needs at least one redirect URI' });
  }
});
export type CreateClientInput = z.input<typeof CreateClientInput>;

export const CreateUserInput = z.strictObject({
  email,
  name: displayName,
});
export type CreateUserInput = z.input<typeof CreateUserInput>;

export const TenantView = z.object({
  id: z.string(),
  name: z.string(),
  lifecycle_state: z.string(),
  allow_signup: z.boolean(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});

export const ClientView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  client_id: z.string(),
  name: z.string(),
  client_type: z.enum(['confidential', 'public']),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.string()),
  scopes: z.array(z.string()),
  audiences: z.array(z.string()),
  first_party: z.boolean(),
  resource_identifiers: z.array(z.string()),
  strict_introspection: z.boolean(),
  status: z.string(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});

export const CreatedClientView = ClientView.extend({
  client_secret: z.string().optional().describe('Shown once, at creation; only a hash is stored.'),
});

export const UserView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  email: z.string(),
  name: z.string(),
  status: z.string(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
