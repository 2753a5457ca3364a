/**
 * Pieces the fault-injection tests (test/faults/) share: budgets wide enough for many logins
 * from 127.0.0.1, the outbox as the database holds it, and the mail a sink received grouped by
 * Message-ID (the outbox sends every attempt of a message under the same one, so a receiver
 * drops duplicates by it: shared/services/outbox.ts).
 */
import type { DataSource } from 'typeorm';
import { all } from '../../shared/db/sql.js';
import type { SinkMessage, SmtpSink } from './smtp-sink.js';

/** Throttling budgets no test load reaches (docs/security.md has the real ones). */
export const WIDE_THROTTLE: Record<string, string> = {
  IAM_THROTTLE_IP_SENDS: '1000000',
  IAM_THROTTLE_IP_VERIFIES: '1000000',
  IAM_THROTTLE_IP_FORM_POSTS: '1000000',
  IAM_THROTTLE_TENANT_SENDS_PER_MINUTE: '1000000',
  IAM_THROTTLE_TENANT_VERIFIES_PER_MINUTE: '1000000',
  IAM_THROTTLE_ADDRESS_MAIL_PER_HOUR: '1000000',
  IAM_THROTTLE_ADDRESS_FAILURES: '1000',
  IAM_EMAIL_CODE_RESEND_SECONDS: '0',
};

/** Each outbox row's status. */
export async function outboxStatuses(ds: DataSource): Promise<Map<string, string>> {
  const rows = await all<{ id: string; status: string }>(ds, 'SELECT id, status FROM outbox');
  return new Map(rows.map((r) => [r.id, r.status]));
}

/**
 * A dead daemon's claims last their full claim time (a minute); rather than wait it out, the
 * test lets it pass: its rows become due at once, as they would be a minute later.
 */
export async function expireClaims(ds: DataSource): Promise<void> {
  const past = Date.now() - 1;
  await ds.query("UPDATE outbox SET claimed_until = ?, next_attempt_at = ? WHERE status = 'sending'", [past, past]);
}

/** The outbox row id a message was sent for: its Message-ID is `<id@domain>`. */
export function outboxIdOf(m: SinkMessage): string {
  return /^<([^@>]+)@/.exec(m.headers['message-id'] ?? '')?.[1] ?? '';
}

/** The sink's messages grouped by outbox row id (from the Message-ID). */
export function copiesById(sink: SmtpSink): Map<string, SinkMessage[]> {
  const by = new Map<string, SinkMessage[]>();
  for (const m of sink.messages) {
    const id = outboxIdOf(m);
    (by.get(id) ?? by.set(id, []).get(id)!).push(m);
  }
  return by;
}

/**
 * A fixed wait, only where no condition can be awaited: a job's simulated work, a clock to pass,
 * or a window in which something must NOT happen. To wait for something, use until() (poll.ts).
 */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
