/**
 * The forms of the OAuth endpoints as /openapi.json describes them (RouteSpec.form): the
 * endpoints read and check these fields themselves, answering RFC 6749 §5.2 errors, so these
 * schemas document the request and validate nothing. Each field cites the section defining it.
 */
import { z } from 'zod';

/**
 * Client authentication in the form (RFC 6749 §2.3.1 client_secret_post; RFC 7523 §2.2
 * private_key_jwt), or client_id alone for a public client; HTTP Basic instead is the
 * `basic` security scheme.
 */
export const ClientAuthentication = {
  client_id: z.string().optional().describe('The client (RFC 6749 §2.3.1, §3.2.1); alone for a public client'),
  client_secret: z.string().optional().describe('client_secret_post (RFC 6749 §2.3.1)'),
  client_assertion_type: z
    .literal('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
    .optional()
    .describe('private_key_jwt (RFC 7523 §2.2), with client_assertion'),
  client_assertion: z.string().optional().describe('A JWT signed with a key of the client (RFC 7523 §2.2)'),
};

const scope = z.string().optional().describe('Space-separated scopes (RFC 6749 §3.3)');

const AuthorizationCode = z
  .object({
    grant_type: z.literal('authorization_code'),
    code: z.string().describe('The authorization code (RFC 6749 §4.1.3)'),
    redirect_uri: z.string().optional().describe('As sent to /authorize (RFC 6749 §4.1.3)'),
    code_verifier: z.string().optional().describe('The PKCE verifier (RFC 7636 §4.5)'),
    ...ClientAuthentication,
  })
  .describe('Authorization code grant (RFC 6749 §4.1.3)');

const RefreshToken = z
  .object({
    grant_type: z.literal('refresh_token'),
    refresh_token: z.string().describe('RFC 6749 §6'),
    scope: scope.describe('At most the scopes originally granted (RFC 6749 §6)'),
    ...ClientAuthentication,
  })
  .describe('Refresh token grant (RFC 6749 §6)');

const resource = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .describe('Resource indicators, repeatable (RFC 8707 §2)');

const ClientCredentials = z
  .object({
    grant_type: z.literal('client_credentials'),
    scope,
    resource,
    agent_grant_id: z.string().optional().describe('Binds the token to an agent grant (docs/agents.md)'),
    ...ClientAuthentication,
  })
  .describe('Client credentials grant (RFC 6749 §4.4.2)');

const TokenExchange = z
  .object({
    grant_type: z.literal('urn:ietf:params:oauth:grant-type:token-exchange'),
    subject_token: z.string().describe('RFC 8693 §2.1'),
    subject_token_type: z.string().describe('A token type URI (RFC 8693 §3)'),
    actor_token: z.string().optional().describe('RFC 8693 §2.1, with actor_token_type'),
    actor_token_type: z.string().optional().describe('Required with actor_token (RFC 8693 §2.1)'),
    requested_token_type: z
      .enum(['urn:ietf:params:oauth:token-type:access_token', 'urn:ietf:params:oauth:token-type:id-jag'])
      .optional()
      .describe(
        'An access token (the default), or an ID-JAG for another authorization server (docs/token-exchange.md)',
      ),
    authorization_details: z.string().optional().describe('RFC 9396 JSON array; may only narrow the subject token’s'),
    scope,
    resource,
    audience: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe('Logical target names, repeatable (RFC 8693 §2.1)'),
    ...ClientAuthentication,
  })
  .describe('Token exchange (RFC 8693 §2.1)');

/** POST /token: one of the grants, by grant_type. */
export const TokenForm = z.discriminatedUnion('grant_type', [
  AuthorizationCode,
  RefreshToken,
  ClientCredentials,
  TokenExchange,
]);

const token_type_hint = z
  .enum(['access_token', 'refresh_token'])
  .optional()
  .describe('Where to look first (RFC 7009 §2.1, RFC 7662 §2.1); an unknown hint is ignored');

/** POST /revoke (RFC 7009 §2.1). */
export const RevocationForm = z.object({
  token: z.string().describe('The access or refresh token to revoke (RFC 7009 §2.1)'),
  token_type_hint,
  ...ClientAuthentication,
});

/** POST /introspect (RFC 7662 §2.1): the caller is a confidential client, never `none`. */
export const IntrospectionForm = z.object({
  token: z.string().describe('The token to introspect (RFC 7662 §2.1)'),
  token_type_hint,
  client_id: ClientAuthentication.client_id.describe('The calling client (RFC 6749 §2.3.1)'),
  client_secret: ClientAuthentication.client_secret,
  client_assertion_type: ClientAuthentication.client_assertion_type,
  client_assertion: ClientAuthentication.client_assertion,
});

/** POST /logout: the confirmation form (OpenID Connect RP-Initiated Logout 1.0 §2). */
export const LogoutForm = z.object({
  csrf: z.string().optional().describe('The confirmation page’s token, bound to the session'),
  id_token_hint: z.string().optional().describe('An ID token of the session to end (§2)'),
  client_id: z.string().optional().describe('The client the request is for (§2)'),
  post_logout_redirect_uri: z.string().optional().describe('Registered for the client (§3)'),
  state: z.string().optional().describe('Given back on the redirect (§3)'),
});
