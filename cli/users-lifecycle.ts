/**
 * What `iam users disable|enable|signout|delete` share (docs/cli.md, "Users: disable, sign out
 * everywhere, delete"): the flags and the printed result of a status move.
 */
import { Flags } from '@oclif/core';
import type { UserLifecycleResult } from '../shared/services/user-lifecycle.js';
import { fields } from './format.js';

export const userFlags = {
  tenant: Flags.string({ description: 'id of the tenant', required: true }),
  user: Flags.string({ description: 'id of the user', required: true }),
};

/** The lines a person reads after a move; `did` says what changed ("disabled", …). */
export function describeMove(r: UserLifecycleResult, did: string, already: string): string {
  const head = r.changed ? `User ${r.id} ${did}.` : `User ${r.id} was already ${already}: nothing changed.`;
  return (
    head +
    '\n' +
    fields([
      ['status', r.status],
      ['sessions ended', String(r.sessions_ended)],
      ['token families revoked', String(r.families_revoked)],
    ])
  );
}
