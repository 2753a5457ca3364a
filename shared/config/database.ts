/**
 * IAM_DATABASE_URL: SQLite (a file) or MySQL/MariaDB (one host, or the host list of a Galera
 * cluster), and the SQLite durability setting. Read by loadConfig (shared/config.ts); the CLI
 * and tests parse a URL with parseDatabaseUrl on its own.
 */
import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from './vars.js';

/**
 * SQLite's `synchronous` setting in WAL mode (https://sqlite.org/pragma.html#pragma_synchronous):
 * FULL syncs the WAL at every COMMIT, so an acknowledged write survives power loss; NORMAL syncs
 * only at checkpoints, so the last commits before a power loss or OS crash can be lost (an
 * application crash loses nothing either way). Group commit makes FULL one fsync per group.
 */
export type SqliteSynchronous = 'FULL' | 'NORMAL';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | {
      kind: 'mysql';
      /** A single-host URL naming the first host (what TypeORM parses). */
      url: string;
      host: string;
      port: number;
      user: string;
      database: string;
      /**
       * Every host the URL lists, in order: `mysql://u:p@h1:3306,h2:3306,h3:3306/db` for the
       * nodes of a Galera cluster. The daemon connects to the first that answers and is ready,
       * and fails over to the next (shared/db/failover.ts). One host for a single server.
       */
      hosts: { host: string; port: number }[];
      /**
       * IAM_GALERA_SYNC_WAIT: wsrep_sync_wait for every session on a Galera node (default 1,
       * causal reads; 0 off). Ignored by a server without wsrep. See shared/db/failover.ts.
       */
      galeraSyncWait?: number;
    };

export function parseDatabaseUrl(raw: string, cwd = process.cwd()): DatabaseConfig {
  const name = 'IAM_DATABASE_URL';
  if (raw.startsWith('sqlite:')) {
    let path = raw.slice('sqlite:'.length);
    if (path.startsWith('//')) path = path.slice(2); // accept sqlite:///abs/path as well
    if (!path) throw new ConfigError(name, 'sqlite: needs a file path, for example sqlite:var/iam.db');
    return { kind: 'sqlite', path: isAbsolute(path) ? path : resolve(cwd, path) };
  }
  if (raw.startsWith('mysql://') || raw.startsWith('mariadb://')) {
    // WHATWG URLs hold one host, so a host list is split off first and each host is checked on
    // its own (the first one becomes the URL TypeORM parses).
    const m = /^(?:mysql|mariadb):\/\/([^/?#]*)(.*)$/s.exec(raw)!;
    const at = m[1].lastIndexOf('@');
    const userinfo = at >= 0 ? m[1].slice(0, at + 1) : '';
    const hostList = m[1].slice(at + 1).split(',');
    const hosts: { host: string; port: number }[] = [];
    let first: URL | undefined;
    for (const [i, h] of hostList.entries()) {
      if (!h) throw new ConfigError(name, `has an empty host in its host list (host ${i + 1})`);
      let u: URL;
      try {
        u = new URL(`mysql://${userinfo}${h}${m[2]}`);
      } catch {
        throw new ConfigError(
          name,
          hostList.length > 1
            ? `host ${i + 1} ("${h}") is not a valid host[:port] (expected mysql://user:pass@h1:port,h2:port/db)`
            : 'is not a valid URL (expected mysql://user:pass@host:port/db)',
        );
      }
      if (!u.hostname) throw new ConfigError(name, 'has no host (expected mysql://user:pass@host:port/db)');
      // An IPv6 literal keeps its brackets in a URL, but not in a socket address.
      hosts.push({ host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: u.port ? Number(u.port) : 3306 });
      first ??= u;
    }
    const u = first!;
    const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
    if (!database) throw new ConfigError(name, 'has no database name (expected mysql://user:pass@host:port/db)');
    const seen = new Set(hosts.map((h) => `${h.host}:${h.port}`));
    if (seen.size !== hosts.length) throw new ConfigError(name, 'lists the same host:port twice');
    return {
      kind: 'mysql',
      url: u.toString(),
      host: u.hostname,
      port: u.port ? Number(u.port) : 3306,
      user: decodeURIComponent(u.username),
      database,
      hosts,
    };
  }
  throw new ConfigError(name, `must start with sqlite: or mysql://, got "${raw.split(':')[0]}:..."`);
}
