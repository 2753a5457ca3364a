/**
 * The interaction endpoints of the node-oidc-provider peers (bench/oidc-provider-peer.ts,
 * bench/oidc-provider-fapi-peer.ts), in front of the provider's own routes, as its
 * documentation shows them: a login form whose POST looks the account up in a map (the trivial
 * account lookup) and a consent form whose POST saves a Grant, each finished with
 * `interactionResult` and a 303 back to the authorization endpoint.
 */
import type { IncomingMessage } from 'node:http';
import type Provider from 'oidc-provider';

const page = (title: string, action: string, fields: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>` +
  `<h1>${title}</h1><form method="post" action="${action}">${fields}<button type="submit">Continue</button>` +
  `</form></body></html>`;

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
      if (body.length > 8192) reject(new Error('body too large'));
    });
    req.on('end', () => resolve(new URLSearchParams(body)));
    req.on('error', reject);
  });
}

export function mountInteractions(provider: Provider, accounts: Map<string, unknown>): void {
  provider.use(async (ctx, next) => {
    const m = /^\/interaction\/([\w-]+)(\/login|\/confirm)?$/.exec(ctx.path);
    if (!m) return next();
    const uid = m[1];
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (ctx.method === 'GET' && !m[2]) {
      ctx.type = 'html';
      ctx.body =
        details.prompt.name === 'login'
          ? page('Sign in', `/interaction/${uid}/login`, '<input name="login" autocomplete="username">')
          : page('Authorize', `/interaction/${uid}/confirm`, `<p>${details.params.scope as string}</p>`);
      return;
    }
    if (ctx.method !== 'POST') return next();
    let result: Record<string, unknown>;
    if (m[2] === '/login') {
      const login = (await readForm(ctx.req)).get('login') ?? '';
      if (details.prompt.name !== 'login' || !accounts.has(login)) {
        ctx.status = 400;
        ctx.body = 'invalid login';
        return;
      }
      result = { login: { accountId: login } };
    } else {
      await readForm(ctx.req);
      if (details.prompt.name !== 'consent') {
        ctx.status = 400;
        ctx.body = 'nothing to consent to';
        return;
      }
      const d = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      const grant = details.grantId
        ? (await provider.Grant.find(details.grantId))!
        : new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
      if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
      if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
      result = { consent: { grantId: await grant.save() } };
    }
    const to = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.redirect(to);
    ctx.status = 303;
  });
}
