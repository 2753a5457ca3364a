import { z } from 'zod';
import { ClientAuthentication } from './oauth-forms.js';

/** A tenant's authorization request policy (docs/par.md): PUT replaces it whole. */
export const AuthorizationRequestPolicyInput = z
  .strictObject({
    requirePushed: z
      .boolean()
      .default(false)
      .describe(
        'RFC 9126 §5: every client of the tenant must push its authorization requests (POST /par); a plain ' +
          "/authorize is refused. Left out: false (each client's own require_pushed_authorization_requests decides)",
      ),
  })
  .describe("A tenant's authorization request policy; PUT replaces it whole");
export type AuthorizationRequestPolicyInput = z.output<typeof AuthorizationRequestPolicyInput>;

export const AuthorizationRequestPolicyView = z.looseObject({
  tenantId: z.string(),
  policy: AuthorizationRequestPolicyInput.describe('The policy as stored'),
});

/** POST /par (RFC 9126 §2.1): the request's parameters, or a request object, and client authentication. */
export const ParForm = z
  .looseObject({
    ...ClientAuthentication,
    request: z
      .string()
      .optional()
      .describe('A signed request object (RFC 9101 §2.1); when given, the other authorization parameters are not read'),
    response_type: z.literal('code').optional().describe('code (RFC 6749 §4.1.1)'),
    redirect_uri: z.string().optional().describe('A registered redirect URI, compared exactly'),
    scope: z.string().optional().describe('Space-separated scopes (RFC 6749 §3.3)'),
    state: z.string().optional(),
    nonce: z.string().optional(),
    code_challenge: z.string().optional().describe('PKCE (RFC 7636 §4.3), S256 only'),
    code_challenge_method: z.literal('S256').optional(),
    prompt: z.string().optional(),
    max_age: z.string().optional(),
    login_hint: z.string().optional(),
    ui_locales: z.string().optional(),
    resource: z.string().optional().describe('RFC 8707 §2; may repeat'),
  })
  .describe('A pushed authorization request (RFC 9126 §2.1): every /authorize parameter, validated as /authorize does');

/** RFC 9126 §2.2. */
export const ParResponse = z.object({
  request_uri: z.string().describe('urn:ietf:params:oauth:request_uri:<random>; single use, for this client only'),
  expires_in: z.number().int().describe('Seconds the request_uri stays valid (60)'),
});
