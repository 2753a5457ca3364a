/** How a container is built (shared/container.ts): which process, which jobs side. */
import type { Metrics } from './metrics.js';
import type { EmailProviders } from './services/mail/index.js';
import type { Outbox } from './services/outbox.js';
import type { PluginRuntime } from './services/plugins/index.js';

export interface ServiceOptions {
  /** The Prometheus series (docs/metrics.md): the daemon's, only when IAM_METRICS_PORT is set. */
  metrics?: Metrics;
  /** Who takes row leases, as it appears in holder names (`daemon:host:pid:…`, `cli:…`). */
  role?: 'daemon' | 'cli';
  /**
   * The jobs side on a DataSource of its own (MySQL): the request side's container, whose
   * process-wide parts it shares rather than builds again: the outbox (the requests' commits
   * kick it, the jobs' deliverers listen), the mail providers (one set of SMTP connections,
   * closed once at stop) and the plugin runtime (one cache of the plugin configuration).
   */
  requests?: RequestSide;
}

/** The request side's process-wide parts that a jobs side shares. */
interface RequestSide {
  outbox: Outbox;
  pluginRuntime: PluginRuntime;
  mail: EmailProviders;
}
