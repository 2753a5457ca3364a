/**
 * /metrics with IAM_WORKERS > 1 (daemon/main.ts's supervisor): the supervisor serves the
 * metrics listener and, per scrape, asks every worker for its registry over the cluster IPC
 * channel and sums them, with prom-client's AggregatorRegistry. Workers do not listen on the
 * metrics port. Counters and histograms are summed, so requests spread over the workers are
 * all counted; each metric of shared/metrics.ts names its own aggregation otherwise.
 *
 * prom-client keeps the registries a worker reports, and its IPC listener, in module state: that
 * is its design for clusters, so it is set here once per process rather than passed around.
 */
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { MetricsSource } from './server.js';

/** In a worker: answer the supervisor's requests with this registry. */
export function reportToSupervisor(registry: Registry): void {
  AggregatorRegistry.setRegistries(registry);
  // The constructor installs the worker's IPC listener (prom-client adds it once per process).
  new AggregatorRegistry();
}

/** In the supervisor: the sum of the workers' registries, per scrape. */
export function clusterSource(): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return {
    render: () => aggregator.clusterMetrics(),
    contentType: aggregator.contentType,
  };
}
