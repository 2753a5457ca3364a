/**
 * What each scope lets an application do, in the user's language: the consent page shows it,
 * and the account page's list of consents can show the same words (catalogue area `scopes`).
 */
import { catalogueKeys, t, type Locale } from './index.js';

export interface ScopeDescription {
  scope: string;
  /** The user-facing sentence; a scope without one (a client's own API scope) is shown as itself. */
  description: string;
}

/** One description per scope, in the order given. */
export function scopeDescriptions(locale: Locale, scopes: readonly string[]): ScopeDescription[] {
  const known = catalogueKeys().en;
  return scopes.map((scope) => ({
    scope,
    description: `scopes.${scope}` in known ? t(locale, `scopes.${scope}`) : scope,
  }));
}
