/**
 * The console's Users pages, their markup (docs/console.md, "Users"): the list's search form and
 * columns, the create form with its inline messages, and the panels of a user's detail page.
 * Each panel shows what one service returned (daemon/routes/console/users.ts reads them); a
 * panel with nothing in it says so instead of drawing an empty table. Every value goes through
 * `esc`; English only, as the rest of the console so far.
 */
import { STANDARD_CLAIM_KEYS } from '../../shared/schemas/standard-claims.js';
import type { UserDetail, UserListItem } from '../../shared/services/users.js';
import type { ConsentView, DeviceDetail } from '../../shared/services/auth/account.js';
import type { PasskeyView } from '../../shared/services/auth/passkey-contract.js';
import type { SignInView } from '../../shared/services/sign-ins.js';
import { tenantPath, utc, type Column } from './console.js';
import { esc } from './html.js';

/** A time as the console shows it: UTC, to the minute. */
export const when = (ms: number | null | undefined) => (ms === null || ms === undefined ? 'never' : utc(ms));

export const userPath = (tenantId: string, userId?: string) => {
  const list = tenantPath(tenantId, '/users');
  return userId === undefined ? list : `${list}/${encodeURIComponent(userId)}`;
};

/** The list's columns: email (the link to the detail), name, status, created. */
export const userColumns = (tenantId: string): Column<UserListItem>[] => [
  {
    key: 'email',
    label: 'Email',
    cell: (u) => `<a href="${esc(userPath(tenantId, u.id))}">${esc(u.email)}</a>`,
    sort: (u) => u.email,
  },
  { key: 'name', label: 'Name', cell: (u) => esc(u.name), sort: (u) => u.name.toLowerCase() },
  { key: 'status', label: 'Status', cell: (u) => esc(u.status), sort: (u) => u.status },
  { key: 'created', label: 'Created', cell: (u) => esc(when(u.created_at)), sort: (u) => u.created_at },
];

/** The search form above the list: one field, addresses or names starting with it. */
export function searchForm(tenantId: string, q: string, problem?: string): string {
  const invalid = problem ? ' aria-invalid="true" aria-describedby="q-error"' : '';
  const message = problem ? `<p id="q-error" class="error">${esc(problem)}</p>` : '';
  return `<form method="get" action="${esc(userPath(tenantId))}" role="search">
<label for="q">Search by email or name</label>
<input id="q" name="q" type="text" value="${esc(q)}" maxlength="200" autocomplete="off"${invalid}>
${message}<button type="submit" class="secondary">Search</button>
</form>`;
}

/** One input of the create form, with the service's message for it (inline validation). */
const input = (name: string, label: string, type: string, value: string, problem?: string) =>
  `<label for="${name}">${esc(label)}</label>
<input id="${name}" name="${name}" type="${type}" value="${esc(value)}" required maxlength="${
    name === 'email' ? 254 : 200
  }"${problem ? ` aria-invalid="true" aria-describedby="${name}-error"` : ''}>
${problem ? `<p id="${name}-error" class="error">${esc(problem)}</p>` : ''}`;

/**
 * The create form. `problems` are the service's messages by field; one that names no field of
 * the form is shown above it.
 */
export function createForm(
  action: string,
  csrf: string,
  values: { email: string; name: string; invite?: boolean },
  problems: Record<string, string> = {},
  cancel: string,
): string {
  const other = Object.entries(problems)
    .filter(([f]) => f !== 'email' && f !== 'name')
    .map(([, m]) => `<p role="alert" class="error">${esc(m)}</p>`)
    .join('');
  return `${other}<form method="post" action="${esc(action)}">
${csrf}
${input('email', 'Email', 'email', values.email, problems.email)}
${input('name', 'Name', 'text', values.name, problems.name)}
<p class="hint">The user signs in with a code sent to this address; no password is set.</p>
<label class="check" for="invite"><input type="checkbox" id="invite" name="invite" value="1"${
    values.invite ? ' checked' : ''
  } aria-describedby="invite-hint"> Send a sign-in link by email</label>
<p id="invite-hint" class="hint">The mail links to the tenant's account page with the address filled in; it
holds no secret.</p>
<button type="submit">Create user</button>
</form>
<p><a href="${esc(cancel)}">Cancel</a></p>`;
}

/** A small table of one panel (no sorting: a detail page has several), cards when narrow. */
function panel(caption: string, heads: string[], rows: string[][], empty: string): string {
  if (!rows.length) return `<p class="empty">${empty}</p>`;
  return `<table class="stack"><caption class="sr-only">${esc(caption)}</caption>
<thead><tr>${heads.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead>
<tbody>
${rows.map((r) => `<tr>${r.map((c, i) => `<td data-label="${esc(heads[i])}">${c}</td>`).join('')}</tr>`).join('\n')}
</tbody></table>`;
}

/** Profile and status: the record's fields as the admin API's GET …/users/{id} shows them. */
export function profilePanel(u: UserDetail): string {
  // The OIDC standard claims the record holds (OIDC Core §5.1), each only when set.
  const std = u as unknown as Record<string, unknown>;
  const extra = STANDARD_CLAIM_KEYS.filter((k) => std[k] !== undefined && std[k] !== null)
    .map((k) => `<dt>${esc(k)}</dt><dd>${esc(typeof std[k] === 'string' ? std[k] : JSON.stringify(std[k]))}</dd>`)
    .join('');
  const at = u.last_sign_in?.client_id ? ` at <code>${esc(u.last_sign_in.client_id)}</code>` : '';
  const last = u.last_sign_in ? `${esc(when(u.last_sign_in.at))}${at}` : 'never';
  return `<dl><dt>Id</dt><dd><code>${esc(u.id)}</code></dd>
<dt>Email</dt><dd>${esc(u.email)} (${u.email_verified ? 'verified' : 'not verified'})</dd>
<dt>Name</dt><dd>${esc(u.name)}</dd>
<dt>Status</dt><dd><span class="badge">${esc(u.status)}</span></dd>${extra}
<dt>Created</dt><dd>${esc(when(u.created_at))}</dd><dt>Updated</dt><dd>${esc(when(u.updated_at))}</dd>
<dt>Last sign-in</dt><dd>${last}</dd></dl>`;
}

export const devicesPanel = (devices: DeviceDetail[]) =>
  panel(
    'Sessions and devices',
    ['Device', 'Application', 'Signed in', 'Last seen', 'Address'],
    devices.map((d) => [
      esc(d.display_name),
      d.client_id ? `${esc(d.app_display_name ?? '')} <code>${esc(d.client_id)}</code>` : '-',
      esc(when(d.first_seen)),
      esc(when(d.last_seen)),
      esc(d.ip ?? '-'),
    ]),
    'No live session: the user is signed in nowhere.',
  );

export const passkeysPanel = (passkeys: PasskeyView[]) =>
  panel(
    'Passkeys',
    ['Name', 'Kind', 'Added', 'Last used'],
    passkeys.map((p) => [
      esc(p.name),
      p.deviceType === 'multiDevice' ? 'synced' : 'this device only',
      esc(when(p.createdAt)),
      esc(when(p.lastUsedAt)),
    ]),
    'No passkey. The user adds one on their account page.',
  );

export const consentsPanel = (consents: ConsentView[]) =>
  panel(
    'Consents',
    ['Application', 'Scopes', 'Given', 'Expires'],
    consents.map((c) => [
      `${esc(c.clientName ?? '')} <code>${esc(c.clientId)}</code>`,
      c.scopes.map((s) => `<code>${esc(s)}</code>`).join(' '),
      esc(when(c.grantedAt)),
      c.expiresAt === undefined ? 'no expiry' : esc(when(c.expiresAt)),
    ]),
    'No consent given to any application.',
  );

export const upstreamPanel = (links: UserDetail['upstream_identities']) =>
  panel(
    'Linked upstream identities',
    ['Provider', 'Issuer', 'Subject', 'State', 'Linked'],
    links.map((l) => [
      `<code>${esc(l.provider_id)}</code>`,
      esc(l.issuer),
      `<code>${esc(l.subject)}</code>`,
      esc(l.state),
      esc(when(l.linked_at)),
    ]),
    'No upstream identity linked: the user has not signed in through an identity provider.',
  );

export const claimsPanel = (claims: Record<string, unknown>) =>
  panel(
    'Custom claim values',
    ['Claim', 'Value'],
    Object.entries(claims).map(([k, v]) => [`<code>${esc(k)}</code>`, `<code>${esc(JSON.stringify(v))}</code>`]),
    'No custom claim value. Values are set with <code>iam users claims set</code> or the admin API.',
  );

export const signInsPanel = (signIns: SignInView[]) =>
  panel(
    'Sign-in history',
    ['Time', 'Method', 'Result', 'Application', 'Device', 'Address'],
    signIns.map((s) => [
      esc(when(s.created_at)),
      esc(s.method),
      s.result === 'success' ? 'success' : `<strong>failed</strong> <code>${esc(s.reason ?? '')}</code>`,
      s.client_id ? `<code>${esc(s.client_id)}</code>` : '-',
      esc(s.device),
      esc(s.ip ?? '-'),
    ]),
    'No sign-in recorded yet.',
  );
