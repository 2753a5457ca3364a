/** What the `iam plugins` commands share: the scope flag, the state printout, the 422 report. */
import { Flags } from '@oclif/core';
import { ApiError } from '../shared/errors.js';
import type { PluginStateResult } from '../shared/services/plugins/index.js';
import { CliFailure } from './base.js';
import { list } from './format.js';

export const scopeFlags = {
  tenant: Flags.string({
    description: "the tenant whose setting to use; without it, the platform-level setting (every tenant's default)",
  }),
};

/** The state as lines for a terminal; secrets are already masked by the service. */
export function describeState(s: PluginStateResult): string {
  const lines = [
    `plugin:      ${s.pluginId}`,
    `scope:       ${s.tenantId === null ? 'platform' : `tenant ${s.tenantId}`}`,
    `enabled:     ${s.enabled ? 'yes' : 'no'}`,
    `config from: ${s.configSource}`,
    `configured:  ${s.configured ? 'yes' : `no (missing: ${list(s.missingRequiredFields)})`}`,
    ...Object.entries(s.config).map(([k, v]) => `  ${k} = ${typeof v === 'string' ? v : JSON.stringify(v)}`),
  ];
  if (s.provisioning)
    lines.push(`provisioning: ${s.provisioning.kind} ${s.provisioning.state} (${s.provisioning.operationId})`);
  return lines.join('\n');
}

/** A 422 from enable, with every missing field in the --json error object. */
export function incompleteFailure(e: unknown): unknown {
  if (e instanceof ApiError && e.status === 422) {
    const f = new CliFailure(e.error, e.message);
    f.context = { missingRequiredFields: e.extra.missingRequiredFields };
    return f;
  }
  return e;
}
