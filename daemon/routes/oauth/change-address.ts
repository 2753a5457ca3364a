/**
 * "Use a different address" on the code page (views/login.ts `codeStep`): back to the email
 * step of the same authorization request, its address in the field to correct. A POST with the
 * request's challenge and CSRF token, as the other login forms (authorization.ts
 * `formContext`), so the authorization request is kept and no other site can drive it. It
 * sends nothing: the next code goes out when the corrected address is submitted.
 */
import Router from '@koa/router';
import { email as emailSchema } from '../../../shared/schemas/common.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { emailStep } from '../../views/login.js';
import { authorizationFlow } from './authorization.js';

export function changeAddressRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { formContext } = authorizationFlow(deps);

  api.page(router, { method: 'post', path: '/login/change-address', parser: 'form' }, async (ctx) => {
    await deps.throttle.formPost(ctx.ip);
    const f = await formContext(ctx);
    if (!f) return;
    const typed = emailSchema.safeParse(f.b.email);
    emailStep(ctx, {
      challenge: f.challenge,
      csrf: f.csrf,
      clientName: f.client.name,
      look: f.look,
      providers: await deps.upstreamBroker.buttons(f.client.tenant_id),
      ...(typed.success ? { email: typed.data } : {}),
    });
  });

  return router;
}
