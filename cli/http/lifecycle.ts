/**
 * `iam tenants suspend` and `iam tenants resume`: read the tenant, show its state, confirm,
 * then POST the move with the values read as the precondition (expected_state,
 * expected_updated_at), so a change made by someone else in between makes the service refuse
 * (409) instead of acting on state the operator never saw. See docs/cli.md.
 */
import { Flags, type Command } from '@oclif/core';
import { CliFailure } from '../base.js';
import { fields, time } from '../format.js';
import { deriveIdempotencyKey, HttpCommand, withContext } from './base.js';
import { ServiceError, type AdminClient } from './client.js';

interface Tenant {
  id: string;
  name: string;
  lifecycle_state: string;
  updated_at: number;
}
interface AuditEvent {
  actor_id: string;
  created_at: number;
  summary: Record<string, unknown>;
}
export interface LifecycleJob {
  job_id: string;
  status: string;
  tenant_id: string;
  lifecycle_state: string;
  validation_required: boolean;
  idempotent_replay?: boolean;
}

export const MOVES = {
  suspend: { from: 'active', to: 'suspended', action: 'tenant.suspend', verb: 'Suspend', done: 'suspended' },
  resume: { from: 'suspended', to: 'active', action: 'tenant.resume', verb: 'Resume', done: 'resumed' },
} as const;
export type Move = keyof typeof MOVES;

export const lifecycleFlags = {
  tenant: Flags.string({ description: 'id of the tenant', required: true }),
  reason: Flags.string({
    description: 'why (recorded in the audit log; an incident or ticket reference helps)',
    required: true,
  }),
  'break-glass': Flags.boolean({
    description:
      'act even if the tenant changed since it was read (skips the updated_at check only; recorded in the audit log)',
    default: false,
  }),
  'idempotency-key': Flags.string({
    description:
      'Idempotency-Key to send (default: derived from the command, the tenant, the state read and the reason)',
  }),
  yes: Flags.boolean({ char: 'y', description: 'do not ask for confirmation (required with --json)', default: false }),
};

export async function readTenant(api: AdminClient, id: string): Promise<Tenant> {
  try {
    return await api.get<Tenant>(`/api/admin/tenants/${encodeURIComponent(id)}`);
  } catch (e) {
    if (e instanceof ServiceError && e.status === 404)
      throw new CliFailure(
        'not_found',
        `--tenant: no tenant with id "${id}" (check the id; \`iam tenants list\` on the database host lists them)`,
      );
    throw e;
  }
}

export async function runLifecycle(
  cmd: HttpCommand<typeof Command>,
  api: AdminClient,
  move: Move,
  flags: {
    tenant: string;
    reason: string;
    'break-glass': boolean;
    'idempotency-key'?: string;
    yes: boolean;
  },
): Promise<LifecycleJob & { idempotency_key: string }> {
  const m = MOVES[move];
  const note = (s: string) => cmd.note(s);
  const tenant = await readTenant(api, flags.tenant);
  note(
    `Tenant ${tenant.id} (${tenant.name})\n${fields([
      ['state', tenant.lifecycle_state],
      ['updated_at', `${tenant.updated_at} (${time(tenant.updated_at)})`],
    ])}`,
  );

  let expected = { state: tenant.lifecycle_state, updatedAt: tenant.updated_at };
  let replay = false;
  if (tenant.lifecycle_state === m.to) {
    // Already in the target state: if that is this very command's earlier run (its response
    // lost), resend that run's exact request so the service replays the stored response.
    const prior = await priorRun(api, move, tenant, flags.reason, flags['break-glass']);
    if (!prior) {
      throw withContext(
        new CliFailure(
          'precondition_failed',
          `tenant ${tenant.id} is already ${m.to} (updated_at ${tenant.updated_at}, ${time(tenant.updated_at)}) ` +
            `and not by this same command (see \`iam audit list --tenant ${tenant.id} --action ${m.action}\`): ` +
            'nothing was sent',
        ),
        { lifecycle_state: tenant.lifecycle_state, updated_at: tenant.updated_at },
      );
    }
    expected = prior;
    replay = true;
    note(
      `The tenant is already ${m.to} by an earlier run of this command (same client and reason); asking the ` +
        `service to replay its result.`,
    );
  } else if (tenant.lifecycle_state !== m.from) {
    throw withContext(
      new CliFailure(
        'precondition_failed',
        `tenant ${tenant.id} is ${tenant.lifecycle_state}; only an ${m.from} tenant can be ${m.done}: nothing was sent`,
      ),
      { lifecycle_state: tenant.lifecycle_state, updated_at: tenant.updated_at },
    );
  }

  if (move === 'suspend' && !replay && (await api.token()).tenant_id === tenant.id) {
    // Suspension revokes every client of the tenant, this login's client included.
    note(
      `Warning: ${tenant.id} is the tenant of the logged-in client: once it is suspended this login stops working, ` +
        `and resuming it needs an iam.platform client of another tenant.`,
    );
  }
  const key =
    flags['idempotency-key'] ??
    deriveIdempotencyKey([
      `tenants ${move}`,
      tenant.id,
      expected.state,
      expected.updatedAt,
      flags.reason,
      flags['break-glass'],
    ]);
  note(`Idempotency key: ${key} (re-run with --idempotency-key ${key} to reuse it)`);
  // A replay cannot act: its precondition names the state before the earlier run, which the
  // tenant no longer has, so the service either replays or refuses. No need to ask again.
  if (!replay) {
    await cmd.confirm(
      `${m.verb} tenant ${tenant.id} (${tenant.name})${flags['break-glass'] ? ' with break-glass' : ''}, reason ` +
        `"${flags.reason}"?`,
      flags.yes,
    );
  }
  let job: LifecycleJob;
  try {
    job = await api.post<LifecycleJob>(
      `/api/admin/tenants/${encodeURIComponent(tenant.id)}/lifecycle/${move}`,
      {
        expected_state: expected.state,
        expected_updated_at: expected.updatedAt,
        reason: flags.reason,
        break_glass: flags['break-glass'],
      },
      key,
    );
  } catch (e) {
    if (e instanceof ServiceError && e.status === 404)
      throw withContext(new CliFailure('not_found', `--tenant: no tenant with id "${tenant.id}"`), {
        idempotency_key: key,
      });
    throw e instanceof CliFailure ? withContext(e, { idempotency_key: key }) : e;
  }
  if (job.idempotent_replay)
    cmd.log(`Already done (replayed): tenant ${job.tenant_id} is ${job.lifecycle_state} (job ${job.job_id})`);
  else cmd.log(`Tenant ${job.tenant_id} ${m.done}: ${job.lifecycle_state} (job ${job.job_id}, ${job.status})`);
  return { ...job, idempotency_key: key };
}

/**
 * The request of this client's earlier run of the same move and reason, when the latest audit
 * event for the tenant is that run and nothing changed the tenant since (its `after.updated_at`
 * is the current one). Needs audit read access; without it there is simply no replay.
 */
async function priorRun(
  api: AdminClient,
  move: Move,
  tenant: Tenant,
  reason: string,
  breakGlass: boolean,
): Promise<{ state: string; updatedAt: number } | undefined> {
  const me = (await api.token()).client_id;
  let events: AuditEvent[];
  try {
    const q = new URLSearchParams({
      tenant_id: tenant.id,
      target_id: tenant.id,
      action: MOVES[move].action,
      outcome: 'success',
      limit: '1',
    });
    events = (await api.get<{ events: AuditEvent[] }>(`/api/admin/audit?${q}`)).events;
  } catch (e) {
    if (e instanceof ServiceError && (e.status === 403 || e.status === 404)) return undefined;
    throw e;
  }
  const s = events[0]?.summary;
  if (!s || events[0].actor_id !== me || s.reason !== reason || (s.break_glass === true) !== breakGlass)
    return undefined;
  if (
    (s.after as { updated_at?: unknown } | undefined)?.updated_at !== tenant.updated_at ||
    typeof s.expected_state !== 'string' ||
    typeof s.expected_updated_at !== 'number'
  )
    return undefined;
  return { state: s.expected_state, updatedAt: s.expected_updated_at };
}
