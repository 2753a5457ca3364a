/**
 * Builds the Koa application, which serves every endpoint. Cross-cutting middleware runs
 * once, in this visible order: request metrics (when IAM_METRICS_PORT is set; daemon/metrics/)
 * → trusted proxies (when configured) → the request frame (request id + access log, security
 * headers, error renderer, shutdown drain) → the introspection router → the root router →
 * the unmatched requests' error style.
 * What differs between routes (body parser, error style, CORS, tenant check) is declared by
 * each route and mounted on it by the registry (daemon/route-declarations.ts), not decided
 * here by path. Nothing here opens sockets or databases; main.ts does that.
 */
import Koa from 'koa';
import Router from '@koa/router';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { AppDeps, AppState } from './context.js';
import { configureCookies } from './cookies.js';
import { bodyReadError } from './middleware/koa-body-errors.js';
import { bodyDepthLimit } from './middleware/koa-body-depth.js';
import { oauthFormFirst } from './middleware/koa-oauth-form.js';
import { corsMounts } from './middleware/koa-cors.js';
import type { RouteMounts } from './route-declarations.js';
import { requestFrame } from './middleware/koa-frame.js';
import { trustedProxies } from './middleware/koa-trusted-proxies.js';
import { ApiRegistry } from './openapi.js';
import { directoryRoutes } from './routes/admin/directory.js';
import { clientLifecycleRoutes } from './routes/admin/clients.js';
import { resourceMetadataRoutes } from './routes/admin/resource-metadata.js';
import { userRoutes } from './routes/admin/users.js';
import { groupRoutes } from './routes/admin/groups.js';
import { userImportRoutes } from './routes/admin/users-import.js';
import { tenantLifecycleRoutes } from './routes/admin/tenant-lifecycle.js';
import { tenantDirectoryRoutes } from './routes/admin/tenants.js';
import { auditRoutes } from './routes/admin/audit.js';
import { tenantRecoveryRoutes } from './routes/admin/tenant-recovery.js';
import { provisioningRoutes } from './routes/admin/provisioning.js';
import { emailSettingsRoutes } from './routes/admin/email-settings.js';
import { brandingRoutes } from './routes/admin/branding.js';
import { sessionPolicyRoutes } from './routes/admin/session-policy.js';
import { dpopPolicyRoutes } from './routes/admin/dpop-policy.js';
import { clientMetadataPolicyRoutes } from './routes/admin/client-metadata-documents.js';
import { mailTemplateRoutes } from './routes/admin/mail-templates.js';
import { pluginRoutes } from './routes/admin/plugins.js';
import { tokenExchangeSettingsRoutes } from './routes/admin/token-exchange-settings.js';
import { agentRoutes } from './routes/admin/agents.js';
import { rbacRoutes } from './routes/admin/rbac.js';
import { customClaimsRoutes } from './routes/admin/custom-claims.js';
import { adminPasskeyRoutes } from './routes/admin/passkeys.js';
import { adminSignInRoutes } from './routes/admin/sign-ins.js';
import { customClaimRenameRoutes } from './routes/admin/custom-claim-rename.js';
import { sourceProfileRoutes } from './routes/admin/field-mapping/source-profiles.js';
import { mappingSetRoutes } from './routes/admin/field-mapping/mapping-sets.js';
import { trustSourceRoutes } from './routes/admin/field-mapping/trust-sources.js';
import { notificationStateRoutes } from './routes/admin/field-mapping/notification-states.js';
import { approvalRoutes } from './routes/admin/approvals.js';
import { externalTokenRefreshRoutes } from './routes/admin/external-token-refresh.js';
import { identityProviderRoutes } from './routes/admin/identity-providers.js';
import { healthRoutes } from './routes/health.js';
import { metaRoutes } from './routes/meta.js';
import { tokenRoutes } from './routes/oauth/token.js';
import { accountPageRoutes } from './routes/account/page.js';
import { introspectionRoutes } from './routes/oauth/introspect.js';
import { authorizeRoutes } from './routes/oauth/authorize.js';
import { parRoutes } from './routes/oauth/par.js';
import { fapiPolicyRoutes } from './routes/admin/fapi.js';
import { authorizationRequestPolicyRoutes } from './routes/admin/authorization-requests.js';
import { loginFormRoutes } from './routes/oauth/login-forms.js';
import { upstreamLoginRoutes } from './routes/oauth/upstream-login.js';
import { consentRoutes } from './routes/oauth/consent.js';
import { oauthEndpoints } from './routes/oauth/endpoints.js';
import { directAuthRoutes } from './routes/direct-auth/direct-auth.js';
import { directPasskeyRoutes } from './routes/direct-auth/passkeys.js';
import { userConsentRoutes } from './routes/user/consents.js';
import { accountDeviceRoutes } from './routes/account/devices.js';
import { accountSignInRoutes } from './routes/account/sign-ins.js';
import { accountAgentGrantRoutes } from './routes/account/agent-grants.js';
import { dataExportRoutes } from './routes/user/data-export.js';
import { accountPasskeyRoutes } from './routes/account/passkeys.js';
import { accountReauthRoutes } from './routes/account/reauth.js';
import { accountProfileRoutes } from './routes/account/profile.js';
import { accountProfileApiRoutes } from './routes/account/profile-api.js';
import { accountDeleteRoutes } from './routes/account/delete.js';
import { accountConsoleRoutes } from './routes/account/sign-in.js';
import { consoleApplicationMoveRoutes } from './routes/console/applications-moves.js';
import { consoleApplicationRoutes } from './routes/console/applications.js';
import { consoleAuditRoutes } from './routes/console/audit.js';
import { consoleOperatorRoutes } from './routes/console/operators.js';
import { consolePageRoutes } from './routes/console/pages.js';
import { consoleSignInRoutes } from './routes/console/sign-in.js';
import { consoleTenantMoveRoutes } from './routes/console/tenant-moves.js';
import { consoleSessionPolicyRoutes } from './routes/console/session-policy.js';
import { consoleSettingsRoutes } from './routes/console/settings.js';
import { consoleUserRoutes } from './routes/console/users.js';
import { consoleTenantAdminRoutes } from './routes/console/tenants-admin.js';
import { consoleOperationRoutes } from './routes/console/operations.js';
import { consoleApprovalRoutes } from './routes/console/operations-approvals.js';
import { consoleAgentGrantRoutes } from './routes/console/operations-agents.js';
import { consoleUserInviteRoutes } from './routes/console/users-invite.js';
import { landingRoutes } from './routes/landing.js';
import { changeAddressRoutes } from './routes/oauth/change-address.js';
import { userLifecycleRoutes } from './routes/admin/user-lifecycle.js';
import { passkeyLoginRoutes } from './routes/oauth/passkey-login.js';
import { assetRoutes } from './routes/assets.js';
import { httpMetrics } from './metrics/http.js';
import { scimRoutes } from './routes/scim/index.js';
import { scimSettingsRoutes } from './routes/admin/scim-settings.js';
import { registrationAdminRoutes } from './routes/admin/registration.js';
import { registrationEndpointRoutes } from './routes/oauth/register.js';

export const VERSION = '0.1.0';

export interface BuiltApp {
  app: Koa<AppState>;
  api: ApiRegistry;
  /** Called by main.ts on SIGTERM: readiness goes red and keep-alive connections close. */
  startDraining: () => void;
}

/**
 * The body parsers and CORS middleware the registry mounts on the routes that declare them.
 * One koa-body for every JSON and HTML-form route, as the global parser was: the same limits
 * and the same 400/413/415 answers (koa-body-errors.ts); then the depth limit.
 */
function routeMounts(deps: AppDeps): RouteMounts {
  const limit = deps.config.bodyLimitBytes;
  const general = koaBody({
    json: true,
    urlencoded: true,
    multipart: false,
    text: false,
    jsonLimit: limit,
    formLimit: limit,
    jsonStrict: true,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    // A body that does not decode, or an unknown Content-Encoding: 400 or 415, never a 500.
    onError: (err) => {
      throw bodyReadError(err);
    },
  }) as Koa.Middleware<AppState>;
  // Right after parsing: a body nested more than 64 levels deep is a 400 on every route
  // (shared/json-depth.ts), before anything that walks it recursively.
  const depth = bodyDepthLimit();
  const generalChain = [general, depth];
  const oauthChain = [oauthFormFirst(general, limit), depth];
  return {
    parser: (kind) => (kind === 'oauth-form' ? oauthChain : generalChain),
    cors: corsMounts(deps),
  };
}

export function buildApp(deps: AppDeps): BuiltApp {
  const app = new Koa<AppState>({ proxy: false });
  const api = new ApiRegistry(routeMounts(deps));
  // The user API answers its errors with error_code and error_id, its unmatched paths too.
  api.area('/api/user', 'user');
  api.area('/api/account', 'user');
  // SCIM 2.0 (docs/scim.md): every answer under /scim/v2, unmatched paths too, in RFC 7644 §3.12's error object.
  api.area('/scim/v2', 'scim');
  let draining = false;
  configureCookies(app, { secure: deps.config.issuer.startsWith('https:') });

  // Request rate and latency per route (docs/metrics.md): outermost, so it times the whole
  // request and sees the final status; not mounted at all when metrics are off.
  if (deps.metrics) app.use(httpMetrics(deps.metrics));
  // First, so that everything after it (sessions, sign-in history, logs) sees the client's
  // address and scheme as the trusted proxies report them (IAM_TRUSTED_PROXIES).
  const proxies = trustedProxies(deps.config.trustedProxies);
  if (proxies) app.use(proxies);
  // Request id + access log, security headers, error renderer and shutdown drain, in one.
  app.use(requestFrame(deps.logger, { https: deps.config.issuer.startsWith('https:'), draining: () => draining }));
  // POST /introspect, which resource servers call on every request they serve: an ordinary
  // declared route, mounted ahead of the root router through ApiRegistry.ahead, which runs its
  // chain directly when the request is exactly its method and path, instead of matching the
  // request against every route (about 20 µs a request on a loaded 2-core machine) and
  // composing the chain per request. Another method on its path goes through its router and on
  // to the root router, whose allowedMethods sees this route in ctx.matched and answers 405.
  app.use(api.ahead(introspectionRoutes(deps, api)) as Koa.Middleware<AppState>);
  const routers = [
    healthRoutes(deps, api, () => draining),
    metaRoutes(deps, api, VERSION),
    oauthEndpoints(deps, api),
    authorizeRoutes(deps, api),
    loginFormRoutes(deps, api),
    upstreamLoginRoutes(deps, api),
    consentRoutes(deps, api),
    tokenRoutes(deps, api),
    parRoutes(deps, api),
    directAuthRoutes(deps, api),
    directPasskeyRoutes(deps, api),
    directoryRoutes(deps, api),
    userLifecycleRoutes(deps, api),
    clientLifecycleRoutes(deps, api),
    resourceMetadataRoutes(deps, api),
    userRoutes(deps, api),
    groupRoutes(deps, api),
    userImportRoutes(deps, api),
    tenantLifecycleRoutes(deps, api),
    tenantDirectoryRoutes(deps, api),
    auditRoutes(deps, api),
    tenantRecoveryRoutes(deps, api),
    provisioningRoutes(deps, api),
    emailSettingsRoutes(deps, api),
    brandingRoutes(deps, api),
    sessionPolicyRoutes(deps, api),
    authorizationRequestPolicyRoutes(deps, api),
    fapiPolicyRoutes(deps, api),
    dpopPolicyRoutes(deps, api),
    clientMetadataPolicyRoutes(deps, api),
    mailTemplateRoutes(deps, api),
    tokenExchangeSettingsRoutes(deps, api),
    customClaimsRoutes(deps, api),
    adminPasskeyRoutes(deps, api),
    adminSignInRoutes(deps, api),
    customClaimRenameRoutes(deps, api),
    // Field mapping and SAML federation (docs/federation.md): one file per resource.
    sourceProfileRoutes(deps, api),
    mappingSetRoutes(deps, api),
    trustSourceRoutes(deps, api),
    notificationStateRoutes(deps, api),
    externalTokenRefreshRoutes(deps, api),
    identityProviderRoutes(deps, api),
    pluginRoutes(deps, api),
    approvalRoutes(deps, api),
    agentRoutes(deps, api),
    rbacRoutes(deps, api),
    userConsentRoutes(deps, api),
    accountDeviceRoutes(deps, api),
    accountSignInRoutes(deps, api),
    accountAgentGrantRoutes(deps, api),
    dataExportRoutes(deps, api),
    accountPageRoutes(deps, api),
    // Passkeys from the pages (docs/passkeys.md, "Pages"), and the scripts those pages load.
    passkeyLoginRoutes(deps, api),
    accountPasskeyRoutes(deps, api),
    accountReauthRoutes(deps, api),
    accountProfileRoutes(deps, api),
    accountProfileApiRoutes(deps, api),
    accountDeleteRoutes(deps, api),
    accountConsoleRoutes(deps, api),
    // The operator console (docs/console.md); IAM_CONSOLE=off leaves /console unrouted: 404.
    ...(deps.config.console === false
      ? []
      : [
          consoleSignInRoutes(deps, api),
          // Before the pages: /console/tenants/new is matched ahead of /console/tenants/:tenantId.
          consoleTenantAdminRoutes(deps, api),
          consolePageRoutes(deps, api),
          consoleTenantMoveRoutes(deps, api),
          consoleSessionPolicyRoutes(deps, api),
          consoleApplicationRoutes(deps, api),
          consoleApplicationMoveRoutes(deps, api),
          consoleSettingsRoutes(deps, api),
          consoleUserRoutes(deps, api),
          consoleUserInviteRoutes(deps, api),
          consoleOperatorRoutes(deps, api),
          consoleOperationRoutes(deps, api),
          consoleApprovalRoutes(deps, api),
          consoleAgentGrantRoutes(deps, api),
          consoleAuditRoutes(deps, api),
        ]),
    landingRoutes(deps, api),
    changeAddressRoutes(deps, api),
    assetRoutes(api),
    scimRoutes(deps, api),
    scimSettingsRoutes(deps, api),
    // Dynamic client registration (RFC 7591/7592) and its admin side (docs/registration.md).
    registrationEndpointRoutes(deps, api),
    registrationAdminRoutes(deps, api),
  ];
  // One root router: a request is matched once, and one allowedMethods answers 405/501,
  // instead of a chain of routers each wrapping the rest.
  const root = new Router<AppState>();
  for (const r of routers) root.use(r.routes());
  app.use(api.direct(root, routers) as Koa.Middleware<AppState>);
  app.use(root.allowedMethods() as Koa.Middleware<AppState>);
  app.use(api.unmatched());

  // Errors are answered by the request frame; Koa's own 'error' event would log them twice.
  app.silent = true;
  return {
    app,
    api,
    startDraining: () => {
      draining = true;
    },
  };
}
