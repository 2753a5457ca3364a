/**
 * Identity providers (docs/console.md, "Pages"; docs/identity-providers.md): a tenant's upstream
 * OpenID providers listed with their state, one provider's detail (never its client secret: the
 * page says it is set, as the admin API returns none), and disable/enable, a dangerous move
 * (step-up) like disabling a client: a disabled provider's button leaves the login page and its
 * users cannot sign in through it. Each through UpstreamIdpRegistry, the admin API's service
 * (daemon/routes/admin/identity-providers.ts). Registering a provider stays with the CLI
 * (`iam idp add`) and the API: it takes a client secret and fetches the issuer's discovery.
 */
import type { UpstreamIdpView } from '../../../shared/services/upstream-idp/index.js';
import type { Column } from '../../views/console.js';
import { codes, details, tenantBase, when, yesNo } from '../../views/console-settings.js';
import { esc } from '../../views/html.js';
import { actorOf } from './kit.js';
import { found, type SettingsPages } from './settings-kit.js';

const SECTION = '/identity-providers';

const columns = (base: string): Column<UpstreamIdpView>[] => [
  {
    key: 'name',
    label: 'Name',
    cell: (p) => `<a href="${esc(`${base}/${encodeURIComponent(p.id)}`)}">${esc(p.display_name)}</a>`,
    sort: (p) => p.display_name.toLowerCase(),
  },
  { key: 'slug', label: 'Slug', cell: (p) => `<code>${esc(p.slug)}</code>`, sort: (p) => p.slug },
  { key: 'issuer', label: 'Issuer', cell: (p) => esc(p.issuer), sort: (p) => p.issuer },
  { key: 'status', label: 'State', cell: (p) => esc(p.status), sort: (p) => p.status },
  { key: 'created', label: 'Created', cell: (p) => when(p.created_at), sort: (p) => p.created_at },
];

const EMPTY =
  'No identity providers yet. Register one with ' +
  '<code>iam idp add --tenant … --issuer https://… --client-id … --client-secret-stdin</code>; ' +
  'its button then shows on the login page.';

type Move = 'disable' | 'enable';
const MOVES: Record<Move, { title: string; status: 'disabled' | 'active'; happens: string }> = {
  disable: {
    title: 'Disable identity provider',
    status: 'disabled',
    happens:
      'Its button leaves the login page and sign-ins through it are refused. Nothing is deleted: the links of its ' +
      'users stay, and enabling it again restores them.',
  },
  enable: {
    title: 'Enable identity provider',
    status: 'active',
    happens: 'Its button shows on the login page again and its users can sign in through it.',
  },
};

export function identityProviderPages(s: SettingsPages): void {
  const { api, router, deps, kit } = s;
  const path = `/console/tenants/:tenantId${SECTION}`;

  s.list(SECTION, 'Identity providers', (t) => deps.upstreamIdps.list(t.id), columns, EMPTY);

  api.page(
    router,
    { method: 'get', path: `${path}/:idpId` },
    s.read(async (ctx, op, t) => {
      const p = await found(deps.upstreamIdps.get(t.id, ctx.params.idpId ?? ''));
      if (!p) return s.missing(ctx, op, 'Identity provider');
      const here = `${tenantBase(t)}${SECTION}/${encodeURIComponent(p.id)}`;
      const move: Move = p.status === 'active' ? 'disable' : 'enable';
      const label = `${move === 'disable' ? 'Disable' : 'Enable'} identity provider…`;
      const link = s.writes(op, t) ? `<p><a class="button secondary" href="${esc(here)}/${move}">${label}</a></p>` : '';
      const body =
        details([
          ['Id', `<code>${esc(p.id)}</code>`],
          ['Slug', `<code>${esc(p.slug)}</code>`],
          ['State', esc(p.status)],
          ['Issuer', esc(p.issuer)],
          ['Client id', `<code>${esc(p.client_id)}</code>`],
          // Never shown, in any form: the admin API returns none either.
          ['Client secret', 'set'],
          ['Scopes', codes(p.scopes)],
          ['Link by verified email', yesNo(p.link_by_verified_email)],
          ['Redirect URI to register upstream', `<code>${esc(p.redirect_uri)}</code>`],
          ['Created', when(p.created_at)],
          ['Updated', when(p.updated_at)],
        ]) + `${link}\n<p><a href="${esc(tenantBase(t) + SECTION)}">All identity providers</a></p>`;
      s.show(ctx, op, t, SECTION, p.display_name, body);
    }),
  );

  for (const move of ['disable', 'enable'] as const) {
    const what = MOVES[move];
    const movePath = `${path}/:idpId/${move}`;

    api.page(
      router,
      { method: 'get', path: movePath },
      s.read(async (ctx, op, t) => {
        const p = await found(deps.upstreamIdps.get(t.id, ctx.params.idpId ?? ''));
        if (!p) return s.missing(ctx, op, 'Identity provider');
        const here = `${tenantBase(t)}${SECTION}/${encodeURIComponent(p.id)}`;
        kit.confirm(ctx, op, t, {
          section: SECTION,
          title: what.title,
          intro: `${esc(what.title)} <strong>${esc(p.display_name)}</strong> (<code>${esc(p.slug)}</code>, now
${esc(p.status)}). ${esc(what.happens)}`,
          action: `${here}/${move}`,
          button: what.title,
          back: here,
        });
      }),
    );

    api.page(
      router,
      { method: 'post', path: movePath, parser: 'form' },
      s.write(true, async (ctx, op, t) => {
        const p = await found(
          deps.upstreamIdps.setStatus(t.id, ctx.params.idpId ?? '', { status: what.status }, actorOf(op)),
        );
        if (!p) return s.missing(ctx, op, 'Identity provider');
        kit.done(ctx, `${tenantBase(t)}${SECTION}/${encodeURIComponent(p.id)}`);
      }),
    );
  }
}
