import Router from '@koa/router';
import { z } from 'zod';
import type { Locale } from '../../../shared/i18n/index.js';
import { tenantId } from '../../../shared/schemas/common.js';
import {
  MailPreviewView,
  MailTemplateInput,
  MailTemplateList,
  MailTemplateParams,
  MailTemplateView,
} from '../../../shared/schemas/mail-templates.js';
import type { MailKind } from '../../../shared/services/mail-templates.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const TenantParam = z.strictObject({ tenantId });
const badInput = { 400: { description: 'invalid input; the message names the field', schema: ErrorObject } };
const noTenant = { 404: { description: 'no such tenant', schema: ErrorObject } };
const noOverride = {
  404: { description: 'no such tenant, or no override of this kind and locale', schema: ErrorObject },
};

/**
 * A tenant's mail template overrides (docs/email.md, "Templates"): list, read, replace and
 * remove the override of one mail kind in one locale, and preview a mail as it would be sent.
 * Every change is audited (`tenant.mail_template.update` / `.delete`) naming the actor.
 */
export function mailTemplateRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const service = deps.mailTemplates;
  const tags = ['admin: mail templates'];
  const base = '/api/admin/tenants/:tenantId/mail-templates';
  const one = `${base}/:kind/:locale`;
  const common = {
    tags,
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: auth,
    scopes: ADMIN_SCOPES,
  };
  const at = (p: { kind: string; locale: string }) => ({ kind: p.kind as MailKind, locale: p.locale as Locale });

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: base,
      summary: "The tenant's mail template overrides, and every mail kind with its variables",
      params: TenantParam,
      responses: {
        200: { description: 'the overrides (none: every mail uses the defaults)', schema: MailTemplateList },
        ...badInput,
        ...bearerErrors('tenant'),
        ...noTenant,
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      ctx.body = { ...(await service.list(id)), kinds: service.kinds() };
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: one,
      summary: "The tenant's override of one mail kind in one locale",
      params: MailTemplateParams,
      responses: {
        200: { description: 'the override, with the last send-time error if any', schema: MailTemplateView },
        ...badInput,
        ...bearerErrors('tenant'),
        ...noOverride,
      },
    },
    async (ctx) => {
      const p = ctx.state.guard.params;
      const { kind, locale } = at(p);
      ctx.body = await service.get(p.tenantId, kind, locale);
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'put',
      path: one,
      summary: 'Override the subject, text and/or HTML of one mail kind in one locale',
      params: MailTemplateParams,
      body: MailTemplateInput,
      responses: {
        200: { description: 'the override, replaced', schema: MailTemplateView },
        201: { description: 'the override, created', schema: MailTemplateView },
        400: {
          description:
            'invalid input, or `invalid_template`: an unknown variable (named in `variable`) ' +
            'or a brace that is no {{name}} tag',
          schema: ErrorObject,
        },
        ...bearerErrors('tenant'),
        ...noTenant,
      },
    },
    async (ctx) => {
      const p = ctx.state.guard.params;
      const { kind, locale } = at(p);
      const r = await service.put(p.tenantId, kind, locale, ctx.state.guard.body, actorOf(ctx));
      ctx.status = r.created ? 201 : 200;
      ctx.body = r.template;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'delete',
      path: one,
      summary: 'Remove the override of one mail kind in one locale (the default applies again)',
      params: MailTemplateParams,
      responses: { 204: { description: 'removed' }, ...badInput, ...bearerErrors('tenant'), ...noOverride },
    },
    async (ctx) => {
      const p = ctx.state.guard.params;
      const { kind, locale } = at(p);
      await service.delete(p.tenantId, kind, locale, actorOf(ctx));
      ctx.status = 204;
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'get',
      path: `${one}/preview`,
      summary: 'The mail of one kind and locale as it would be sent now, with sample variables',
      params: MailTemplateParams,
      responses: {
        200: { description: 'subject, text and HTML, and whether the override was used', schema: MailPreviewView },
        ...badInput,
        ...bearerErrors('tenant'),
        ...noTenant,
      },
    },
    async (ctx) => {
      const p = ctx.state.guard.params;
      ctx.body = await service.preview(p.tenantId, p.kind, p.locale);
    },
  );

  return router;
}
