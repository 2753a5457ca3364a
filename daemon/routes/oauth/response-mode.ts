/**
 * How the authorization response reaches the client (docs/jarm.md): the response modes this
 * service offers for response_type=code, and the auto-submitting form of `form_post` (OAuth 2.0
 * Form Post Response Mode) and `form_post.jwt` (JARM §2.3.3).
 *
 * - `query` (the default for code, OAuth 2.0 Multiple Response Types §2.1) and `form_post`:
 *   the parameters themselves, with `iss` (RFC 9207 §2).
 * - `query.jwt` and `form_post.jwt` (JARM §2.3.1, §2.3.3): one parameter, `response`, a JWT
 *   signed by the service holding them (shared/services/signed-responses.ts). `jwt` is
 *   `query.jwt` for response_type=code (JARM §2.3.4).
 * `fragment` and `fragment.jwt` are not offered: a code is read by the client's server, and a
 * fragment never reaches it.
 */
import type { ParameterizedContext } from 'koa';
import { t } from '../../../shared/i18n/index.js';
import type { ResponseMode } from '../../../shared/services/signed-responses.js';
import { FORM_POST_ASSET } from '../../views/assets.js';
import { esc, renderPage, type PageLook } from '../../views/html.js';

/** `response_modes_supported` (OIDC Discovery §3, JARM §4). */
export const RESPONSE_MODES_SUPPORTED = ['query', 'form_post', 'jwt', 'query.jwt', 'form_post.jwt'] as const;

/**
 * The request's `response_mode`, or an error description when it names a mode not offered
 * (invalid_request, sent back in the default mode: the one the client asked for is unusable).
 * The default, `query`, is left out of the saved request (undefined).
 */
export function parseResponseMode(q: Record<string, unknown>): { mode?: ResponseMode } | { error: string } {
  const v = q.response_mode;
  if (v === undefined) return {};
  if (typeof v !== 'string') return { error: 'response_mode must appear once.' };
  switch (v) {
    case 'query':
      return {};
    case 'jwt':
      return { mode: 'query.jwt' }; // JARM §2.3.4: the default mode of response_type=code
    case 'form_post':
    case 'query.jwt':
    case 'form_post.jwt':
      return { mode: v };
    default:
      return { error: `response_mode ${v.slice(0, 40)} is not supported (${RESPONSE_MODES_SUPPORTED.join(', ')}).` };
  }
}

/**
 * The page that posts the response to the client's redirect URI (Form Post Response Mode §2):
 * a form of hidden fields, submitted by the page's one script (a same-origin asset under the
 * page's nonce CSP), or by its button without JavaScript. Nothing is cached or referred.
 */
export function formPostPage(
  ctx: ParameterizedContext,
  redirectUri: string,
  fields: Record<string, string>,
  look: PageLook,
): void {
  const hidden = Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('\n');
  const title = t(look.locale, 'common.formPostTitle');
  renderPage(ctx, {
    title,
    ...look,
    scripts: [FORM_POST_ASSET.url],
    body: `<h1>${esc(title)}</h1>
<form method="post" action="${esc(redirectUri)}" id="form-post">
${hidden}
<button type="submit">${esc(t(look.locale, 'common.formPostButton'))}</button>
</form>`,
  });
}
