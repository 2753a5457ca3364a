import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** `kind:host:pid:random`: a row lease holder, readable by an operator. */
export function holderName(kind: string): string {
  return `${kind}:${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`.slice(0, 128);
}
