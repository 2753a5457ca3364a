/** The human form of a tenant's token exchange settings (`iam tenants token-exchange show|set`). */
import type { TokenExchangeSettings } from '../shared/services/token-exchange/settings.js';

export function showTokenExchange(tenantId: string, s: TokenExchangeSettings, note: string): string {
  const on = (b: boolean) => (b ? 'on' : 'off');
  const lines = [
    `Token exchange for ${tenantId}: ${on(s.enabled)}`,
    `  subject token types: ${s.allowedSubjectTokenTypes.join(', ')}`,
    `  resource / audience parameters at most: ${s.maxResourceParams} / ${s.maxAudienceParams}`,
    `  require may_act with an actor: ${s.requireMayAct ? 'yes' : 'no'}`,
    `  ID-JAGs accepted: ${on(s.idJag.enabled)}` +
      (s.idJag.allowedIssuers.length ? ` from ${s.idJag.allowedIssuers.join(', ')}` : ''),
    `  ID-JAGs issued: ${on(s.idJagIssuance.enabled)}, ${s.idJagIssuance.maxLifetime} s`,
  ];
  for (const t of s.idJagIssuance.trustedAuthorizationServers) {
    lines.push(`    to ${t.issuer}${t.audTenant ? ` (tenant ${t.audTenant})` : ''}`);
    for (const c of t.clients)
      lines.push(
        `      ${c.clientId} as ${c.targetClientId}: scopes ${c.scopes.join(' ') || '(none)'}` +
          (c.resources ? `; resources ${c.resources.join(' ')}` : ''),
      );
    if (!t.clients.length) lines.push('      (no client may ask)');
  }
  lines.push(note);
  return lines.join('\n');
}
