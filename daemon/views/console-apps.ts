/**
 * The console's Applications section, as markup (docs/console.md, "Applications"): the list's
 * columns, the create and edit forms with the registration's refusals beside their fields, the
 * detail, and the page that shows a secret once. Pure views: the routes
 * (daemon/routes/console/applications*.ts) decide what is shown and pass the CSRF field in.
 */
import type { ClientPublic } from '../../shared/services/directory.js';
import type { ClientSecretInfo } from '../../shared/services/client-lifecycle.js';
import { GRANT_TYPES } from '../../shared/schemas/common.js';
import { tenantPath, utc as when, type Column } from './console.js';
import { esc } from './html.js';

/** The form's fields (registration names where they exist; `client_name` as in RFC 7591 §2). */
export type AppField =
  | 'client_name'
  | 'type'
  | 'redirect_uris'
  | 'allowed_origins'
  | 'grant_types'
  | 'scopes'
  | 'logo_uri'
  | 'old_secret_expires_in';

/** What the form shows: the operator's input (or the stored registration), as typed. */
export interface AppFormValues {
  client_name: string;
  type: 'confidential' | 'public';
  /** One per line. */
  redirect_uris: string;
  /** One per line. */
  allowed_origins: string;
  grant_types: string[];
  /** Space-separated. */
  scopes: string;
  logo_uri: string;
}

/** A refusal beside its field; `form` is one no field owns (shown above the form). */
export type AppErrors = Partial<Record<AppField | 'form', string>>;

/** The application's page under a tenant. */
export const appPath = (tenantId: string, clientId?: string) => {
  const list = tenantPath(tenantId, '/applications');
  return clientId === undefined ? list : `${list}/${encodeURIComponent(clientId)}`;
};

const codes = (v: string[]) => (v.length ? v.map((x) => `<code>${esc(x)}</code>`).join(' ') : 'none');
const lines = (v: string[]) =>
  v.length ? `<ul>${v.map((x) => `<li><code>${esc(x)}</code></li>`).join('')}</ul>` : 'none';

export const appColumns = (tenantId: string): Column<ClientPublic>[] => [
  {
    key: 'name',
    label: 'Name',
    cell: (c) => `<a href="${esc(appPath(tenantId, c.client_id))}">${esc(c.name)}</a>`,
    sort: (c) => c.name.toLowerCase(),
  },
  { key: 'client_id', label: 'client_id', cell: (c) => `<code>${esc(c.client_id)}</code>`, sort: (c) => c.client_id },
  { key: 'type', label: 'Type', cell: (c) => esc(c.client_type), sort: (c) => c.client_type },
  { key: 'state', label: 'State', cell: (c) => esc(c.status), sort: (c) => c.status },
  { key: 'created', label: 'Created', cell: (c) => esc(when(c.created_at)), sort: (c) => c.created_at },
];

export const NO_APPS =
  'No applications yet. Use <strong>Create application</strong> to register one ' +
  '(or <code>iam clients create --tenant …</code>).';

/** One labelled control with its hint and refusal, tied to it for assistive technology. */
function fieldBlock(id: string, label: string, control: (attrs: string) => string, error?: string, hint?: string) {
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const invalid = error ? ' aria-invalid="true"' : '';
  const attrs = `id="${id}"${invalid}${described ? ` aria-describedby="${described}"` : ''}`;
  return `<label for="${id}">${esc(label)}</label>
${hint ? `<p class="hint" id="${id}-hint">${hint}</p>\n` : ''}${control(attrs)}
${error ? `<p class="error" id="${id}-error">${esc(error)}</p>` : ''}`;
}

/**
 * The create form (`client` absent) or the edit form of `client`, with `values` as typed and
 * the refusals beside their fields. The edit form carries the ETag the page was drawn from, so
 * the post is a conditional update (RFC 9110 §13.1.1).
 */
export function appForm(p: {
  tenantId: string;
  csrfField: string;
  values: AppFormValues;
  errors: AppErrors;
  client?: ClientPublic;
  etag?: string;
}): string {
  const { values: v, errors: e, client } = p;
  const action = client ? `${appPath(p.tenantId, client.client_id)}/edit` : `${appPath(p.tenantId)}/new`;
  const cancel = client ? appPath(p.tenantId, client.client_id) : appPath(p.tenantId);
  const type = client
    ? `<p>Type: <strong>${esc(client.client_type)}</strong> (kept as registered)</p>`
    : fieldBlock(
        'type',
        'Type',
        (a) =>
          `<select ${a} name="type">${(['confidential', 'public'] as const)
            .map((t) => `<option value="${t}"${v.type === t ? ' selected' : ''}>${t}</option>`)
            .join('')}</select>`,
        e.type,
        'confidential: a server that keeps a secret; public: a browser or native app (no secret, PKCE always).',
      );
  const grants = GRANT_TYPES.map(
    (g, i) =>
      `<label class="check" for="grant-${i}">` +
      `<input type="checkbox" id="grant-${i}" name="grant_types" value="${esc(g)}"` +
      `${v.grant_types.includes(g) ? ' checked' : ''}> <code>${esc(g)}</code></label>`,
  ).join('\n');
  const grantHint = client
    ? 'At least one; to stop the application, disable it instead.'
    : 'None checked: authorization_code and refresh_token.';
  const alert = e.form ? `<p role="alert" class="error">${esc(e.form)}</p>\n` : '';
  const name = (a: string) =>
    `<input ${a} name="client_name" type="text" required maxlength="200" value="${esc(v.client_name)}">`;
  return `${alert}<form method="post" action="${esc(action)}">
${p.csrfField}
${p.etag === undefined ? '' : `<input type="hidden" name="etag" value="${esc(p.etag)}">`}
${fieldBlock('client_name', 'Name', name, e.client_name)}
${type}
${fieldBlock(
  'redirect_uris',
  'Redirect URIs',
  (a) => `<textarea ${a} name="redirect_uris" rows="3" spellcheck="false">${esc(v.redirect_uris)}</textarea>`,
  e.redirect_uris,
  'One per line, matched exactly: https, http on a loopback address, or a private-use scheme such as ' +
    'com.example.app:/cb.',
)}
${fieldBlock(
  'allowed_origins',
  'Allowed origins (CORS)',
  (a) => `<textarea ${a} name="allowed_origins" rows="2" spellcheck="false">${esc(v.allowed_origins)}</textarea>`,
  e.allowed_origins,
  'One per line, scheme://host[:port]: the web origins whose scripts may call /token, /revoke and /userinfo for a browser (public) application.',
)}
<fieldset${e.grant_types ? ' aria-describedby="grant_types-error"' : ''}><legend>Grant types</legend>
<p class="hint">${grantHint}</p>
${grants}
${e.grant_types ? `<p class="error" id="grant_types-error">${esc(e.grant_types)}</p>` : ''}</fieldset>
${fieldBlock(
  'scopes',
  'Scopes',
  (a) => `<input ${a} name="scopes" type="text" spellcheck="false" value="${esc(v.scopes)}">`,
  e.scopes,
  client ? 'Separated by spaces.' : 'Separated by spaces; empty: openid profile email.',
)}
${
  client
    ? fieldBlock(
        'logo_uri',
        'Logo URI',
        (a) => `<input ${a} name="logo_uri" type="text" spellcheck="false" value="${esc(v.logo_uri)}">`,
        e.logo_uri,
        'An https URL shown with the consents; empty: none.',
      )
    : ''
}
<button type="submit">${client ? 'Save changes' : 'Create application'}</button>
</form>
<p><a href="${esc(cancel)}">Cancel</a></p>`;
}

/** The stored registration as the edit form's values. */
export const valuesOf = (c: ClientPublic): AppFormValues => ({
  client_name: c.name,
  type: c.client_type,
  redirect_uris: c.redirect_uris.join('\n'),
  allowed_origins: c.allowed_origins.join('\n'),
  grant_types: c.grant_types,
  scopes: c.scopes.join(' '),
  logo_uri: c.logo_uri ?? '',
});

/** Whether the application authenticates with a secret (the only ones a secret is rotated for). */
export const hasSecret = (c: ClientPublic) =>
  c.client_type === 'confidential' &&
  (c.token_endpoint_auth_method === 'client_secret_basic' || c.token_endpoint_auth_method === 'client_secret_post');

/** Every stored field of the registration (never a secret), the live secrets, and the moves. */
export function appDetail(tenantId: string, c: ClientPublic, secrets: ClientSecretInfo[], writes: boolean): string {
  const base = appPath(tenantId, c.client_id);
  const opt = (v: string | null | undefined) => (v ? `<code>${esc(v)}</code>` : 'none');
  const yes = (b: boolean) => (b ? 'yes' : 'no');
  const alg = (v: string | null) => (v ? `<code>${esc(v)}</code>` : 'ES256 (default)');
  const keys = c.jwks ? `${c.jwks.keys.length} inline` : c.jwks_uri ? `<code>${esc(c.jwks_uri)}</code>` : 'none';
  const userinfo = c.userinfo_signed_response_alg
    ? `a JWT signed with <code>${esc(c.userinfo_signed_response_alg)}</code>`
    : 'plain JSON';
  const rows: [string, string | false][] = [
    ['client_id', `<code>${esc(c.client_id)}</code>`],
    ['Id', `<code>${esc(c.id)}</code>`],
    ['Type', esc(c.client_type)],
    ['State', esc(c.status)],
    ['Description', !!c.description && esc(c.description)],
    ['Authentication at /token', `<code>${esc(c.token_endpoint_auth_method)}</code>`],
    ['Redirect URIs', lines(c.redirect_uris)],
    ['Grant types', codes(c.grant_types)],
    ['Scopes', codes(c.scopes)],
    ['Allowed origins (CORS)', lines(c.allowed_origins)],
    ['Audiences', lines(c.audiences)],
    ['First party (no consent asked)', yes(c.first_party)],
    ['PKCE required', yes(c.require_pkce)],
    ['Resource identifiers', lines(c.resource_identifiers)],
    ['Strict introspection', yes(c.strict_introspection)],
    ['Logo URI', opt(c.logo_uri)],
    ['Home page', !!c.client_uri && opt(c.client_uri)],
    ['Keys (private_key_jwt)', keys],
    ['ID token algorithm', alg(c.id_token_signed_response_alg)],
    ['Access token algorithm', alg(c.access_token_signed_response_alg)],
    ['UserInfo', userinfo],
    ['Created', esc(when(c.created_at))],
    ['Updated', esc(when(c.updated_at))],
  ];
  const dl = `<dl>\n${rows
    .filter(([, v]) => v !== false)
    .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`)
    .join('\n')}\n</dl>`;
  const secretList = hasSecret(c)
    ? `<h2>Secrets</h2>\n${
        secrets.length
          ? `<ul>${secrets
              .map(
                (s) =>
                  `<li><code>${esc(s.id)}</code>, added ${esc(when(s.created_at))}` +
                  `${s.expires_at === null ? '' : `, stops ${esc(when(s.expires_at))}`}</li>`,
              )
              .join('')}</ul>`
          : '<p class="empty">No live secret: rotate to get one.</p>'
      }`
    : '';
  const link = (path: string, text: string) =>
    `<a class="button secondary" href="${esc(`${base}/${path}`)}">${text}</a>`;
  const moves = writes
    ? `<h2>Changes</h2>
${link('edit', 'Edit application…')}
${hasSecret(c) ? link('rotate-secret', 'Rotate secret…') : ''}
${c.status === 'active' ? link('disable', 'Disable application…') : link('enable', 'Enable application…')}
${link('delete', 'Delete application…')}`
    : '';
  return `${dl}\n${secretList}\n${moves}\n<p><a href="${esc(appPath(tenantId))}">All applications</a></p>`;
}

/** A secret shown this once, with how to keep it (no script: select and copy). */
export function secretOnce(secret: string, note: string): string {
  return `<p role="status">${esc(note)}</p>
<p>Client secret: <code id="secret">${esc(secret)}</code></p>
<p class="hint">Shown this once: only a hash is kept, so it cannot be shown again. Select it and copy it into the
application's configuration (or a secret store) now.</p>`;
}
