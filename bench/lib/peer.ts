/**
 * Starting the node-oidc-provider peer (bench/oidc-provider-peer.ts) in its own process, and
 * the clients it knows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/daemon.js';

export const PEER_RS = { id: 'bench-rs', secret: 'bench-rs-secret-0123456789abcdef' };
export const PEER_WEB = { id: 'bench-web', secret: 'bench-web-secret-0123456789abcdef' };
/** The FAPI peer's private_key_jwt client (bench/oidc-provider-fapi-peer.ts). */
export const PEER_FAPI = { id: 'bench-fapi' };
export const PEER_REDIRECT = 'https://rp.bench.test/callback';

export interface Peer {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts the peer with accounts bench0 … bench<accounts-1> and waits until it listens. `script`
 * picks another peer configuration in bench/ (oidc-provider-cc-peer.js: JWT access tokens;
 * oidc-provider-fapi-peer.js: FAPI 2.0), `env` adds to its environment.
 */
export async function startPeer(
  opts: { accounts?: number; script?: string; env?: Record<string, string> } = {},
): Promise<Peer> {
  const port = await freePort();
  const script = join(import.meta.dirname, '..', opts.script ?? 'oidc-provider-peer.js');
  const proc = spawn(process.execPath, [script, String(port), String(opts.accounts ?? 256)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...opts.env },
  });
  await new Promise<void>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve();
    });
    proc.once('exit', (c) => reject(new Error(`${script} exited ${c}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
