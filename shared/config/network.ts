/**
 * The network settings beside the service's own listener: the reverse proxies that are
 * believed (IAM_TRUSTED_PROXIES), the CA certificates outbound HTTPS trusts
 * (IAM_OUTBOUND_CA_FILE), and the Prometheus listener (IAM_METRICS_PORT, IAM_METRICS_HOST).
 * Read by loadConfig (shared/config.ts).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { ConfigError } from './vars.js';

/**
 * IAM_TRUSTED_PROXIES: comma-separated IPv4 and IPv6 CIDR ranges (`10.0.0.0/8`, `::1/128`, or
 * a bare address). Each is checked here, so a typo stops the start with the entry named rather
 * than silently trusting nothing (or the wrong hop).
 */
export function parseTrustedProxies(raw: string | undefined): string[] {
  const name = 'IAM_TRUSTED_PROXIES';
  const out: string[] = [];
  for (const entry of (raw ?? '').split(',')) {
    const e = entry.trim();
    if (!e) continue;
    const m = /^([^/\s]+?)(?:\/([0-9]{1,3}))?$/.exec(e);
    const family = m ? isIP(m[1]) : 0;
    if (!m || family === 0)
      throw new ConfigError(name, `"${e}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, fd00::/8, 127.0.0.1)`);
    const max = family === 4 ? 32 : 128;
    const prefix = m[2] === undefined ? max : Number(m[2]);
    if (prefix > max) throw new ConfigError(name, `"${e}": the prefix length must be 0 to ${max}`);
    out.push(`${m[1]}/${prefix}`);
  }
  return out;
}

/**
 * IAM_METRICS_PORT and IAM_METRICS_HOST (docs/metrics.md). The metrics listener is a second
 * socket, so it cannot share the service's port; a host without a port would be a listener the
 * operator believes is there and is not, so it is refused rather than ignored.
 */
export function metricsListenerConfig(
  env: NodeJS.ProcessEnv,
  servicePort: number,
): { metricsPort: number | undefined; metricsHost: string } {
  const rawPort = env.IAM_METRICS_PORT?.trim();
  const rawHost = env.IAM_METRICS_HOST?.trim();
  if (!rawPort) {
    if (rawHost)
      throw new ConfigError('IAM_METRICS_HOST', 'is set but IAM_METRICS_PORT is not: set the port to serve /metrics');
    return { metricsPort: undefined, metricsHost: '127.0.0.1' };
  }
  if (!/^\d+$/.test(rawPort))
    throw new ConfigError('IAM_METRICS_PORT', `must be a port number from 0 to 65535, got "${env.IAM_METRICS_PORT}"`);
  const metricsPort = Number(rawPort);
  if (metricsPort > 65535)
    throw new ConfigError('IAM_METRICS_PORT', `must be a port number from 0 to 65535, got ${metricsPort}`);
  if (metricsPort !== 0 && metricsPort === servicePort)
    throw new ConfigError(
      'IAM_METRICS_PORT',
      `must differ from IAM_PORT (${servicePort}): /metrics has its own listener`,
    );
  const metricsHost = rawHost || '127.0.0.1';
  if (!/^[A-Za-z0-9.:_-]+$/.test(metricsHost) && metricsHost !== '::')
    throw new ConfigError('IAM_METRICS_HOST', `is not a host name or address: "${metricsHost}"`);
  return { metricsPort, metricsHost };
}

/** Reads a PEM bundle of CA certificates and checks that it holds at least one certificate. */
export function loadCaFile(env: NodeJS.ProcessEnv, cwd: string): { file: string | undefined; pem: string | undefined } {
  const name = 'IAM_OUTBOUND_CA_FILE';
  const raw = env[name]?.trim();
  if (!raw) return { file: undefined, pem: undefined };
  const file = resolve(cwd, raw);
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(name, `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(name, `${file} holds no PEM certificate`);
  try {
    new X509Certificate(pem);
  } catch {
    throw new ConfigError(name, `${file} is not a valid PEM certificate`);
  }
  return { file, pem };
}
