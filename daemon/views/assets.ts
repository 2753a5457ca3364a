/**
 * The static scripts the pages load (GET /assets/<name>): the @simplewebauthn/browser bundle
 * and the passkey script of our own (passkeys-script.ts). Both are read once, when the daemon
 * starts, and served from memory. A page names an asset by a URL that carries a hash of its
 * content (`?v=<hash>`), so a browser may keep it for a year (`immutable`): a new version has
 * a new URL. A request without that hash still gets the asset, revalidated by its ETag.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PASSKEYS_SCRIPT } from './passkeys-script.js';

export interface Asset {
  /** The path the router serves, e.g. /assets/webauthn.js. */
  path: string;
  /** The URL a page names: the path plus the content hash. */
  url: string;
  /** The content hash (hex, 16 characters): the `v` parameter and the strong ETag. */
  hash: string;
  body: Buffer;
  contentType: string;
}

/**
 * The UMD bundle of @simplewebauthn/browser (it defines the global `SimpleWebAuthnBrowser`).
 * The package's "exports" map names only its CommonJS and ES module entry points, not dist/,
 * so the file is found from the resolved CommonJS entry by walking up to the package root.
 */
function webauthnBundle(): Buffer {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve('@simplewebauthn/browser'));
  for (let i = 0; i < 4; i++) {
    const candidate = join(dir, 'dist', 'bundle', 'index.umd.min.js');
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return readFileSync(candidate);
    dir = dirname(dir);
  }
  throw new Error('@simplewebauthn/browser: dist/bundle/index.umd.min.js not found');
}

function asset(name: string, body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const path = `/assets/${name}`;
  return { path, url: `${path}?v=${hash}`, hash, body, contentType: 'text/javascript; charset=utf-8' };
}

/** Read once per process, at startup (module load). */
export const WEBAUTHN_ASSET = asset('webauthn.js', webauthnBundle());
export const PASSKEYS_ASSET = asset('passkeys.js', Buffer.from(PASSKEYS_SCRIPT, 'utf8'));

/**
 * The form_post response page's script (daemon/routes/oauth/response-mode.ts): submits the
 * page's one form at once. Without it the page's button does the same.
 */
export const FORM_POST_ASSET = asset(
  'form-post.js',
  Buffer.from("'use strict';\ndocument.getElementById('form-post').submit();\n", 'utf8'),
);

export const ASSETS: readonly Asset[] = [WEBAUTHN_ASSET, PASSKEYS_ASSET, FORM_POST_ASSET];

/** The scripts a passkey page carries, in load order (the bundle first: ours uses its global). */
export const PASSKEY_SCRIPTS: readonly string[] = [WEBAUTHN_ASSET.url, PASSKEYS_ASSET.url];
