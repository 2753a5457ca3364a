import { Errors, Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showSessionPolicy } from '../../../sessions.js';
import { parseDurationText } from '../../../../shared/schemas/session-policy.js';

export default class TenantsSessionsSet extends BaseCommand<typeof TenantsSessionsSet> {
  static override summary = "Change a tenant's session timeouts: idle and absolute.";
  static override description =
    'Changes the timeouts named by flags and keeps the other; stored as PUT ' +
    '/api/admin/tenants/{tenantId}/session-policy stores them, audited (tenant.session_policy.update). A ' +
    'duration is written 90s, 30m, 12h or 7d; the idle timeout is 5 minutes to 30 days, the absolute lifetime ' +
    "5 minutes to 7 days (the service's own, and its default). They apply to the tenant's live sessions at " +
    'their next request. A change made by someone else between the read and the write is refused ' +
    '(precondition_failed), as is one made since --if-match was read. See docs/security.md, "Session timeouts".';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --idle 30m --max 12h',
    {
      description: "No idle timeout any more, and back to the service's 7 days.",
      command: '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --clear-idle --clear-max',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    idle: Flags.string({ description: 'end a session unused this long (5m to 30d)', exclusive: ['clear-idle'] }),
    max: Flags.string({ description: 'end a session this old, however used (5m to 7d)', exclusive: ['clear-max'] }),
    'clear-idle': Flags.boolean({ description: 'no idle timeout' }),
    'clear-max': Flags.boolean({ description: "back to the service's 7 days" }),
    'if-match': Flags.string({ description: 'the ETag read before (refused if the timeouts changed since)' }),
  };
  static override fieldFlags = { idleTimeoutSeconds: 'idle', maxLifetimeSeconds: 'max' };

  async run() {
    const f = this.flags;
    if (f.idle === undefined && f.max === undefined && !f['clear-idle'] && !f['clear-max'])
      throw new Errors.CLIError('give at least one of --idle, --max, --clear-idle, --clear-max', { exit: 2 });
    await this.requireTenant(f.tenant);
    const { view, etag } = await this.services.sessionPolicy.view(f.tenant);
    const next: Record<string, number> = { ...view.policy };
    if (f['clear-idle']) delete next.idleTimeoutSeconds;
    if (f['clear-max']) delete next.maxLifetimeSeconds;
    if (f.idle !== undefined) next.idleTimeoutSeconds = duration('idle', f.idle);
    if (f.max !== undefined) next.maxLifetimeSeconds = duration('max', f.max);
    this.serviceInput = next;
    const r = await this.services.sessionPolicy.update(f.tenant, next, this.actor, { ifMatch: f['if-match'] ?? etag });
    this.log(showSessionPolicy(r.view, r.etag));
    return { ...r.view, etag: r.etag };
  }
}

function duration(flag: string, text: string): number {
  const s = parseDurationText(text);
  // oclif's own usage error, so that the exit code is 2 with or without --json.
  if (s === undefined)
    throw new Errors.CLIError(`--${flag}: not a duration: ${text} (write 30m, 12h, 7d)`, { exit: 2 });
  return s;
}
