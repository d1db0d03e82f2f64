import { Controller, Get, Header, Inject, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import * as promClient from 'prom-client';
import type { Registry } from 'prom-client';
import { DistributedLockService } from '../../lib';
import { registerLockMetrics } from '../../lib/observability';

/** The app's own prom-client registry (not prom-client's global one). */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

/** Prometheus scrape endpoint: the distributed_lock_* metrics of this replica. */
@Controller('metrics')
export class MetricsController implements OnModuleInit, OnApplicationShutdown {
  private unregister?: () => void;

  constructor(
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    private readonly locks: DistributedLockService,
  ) {}

  onModuleInit(): void {
    // The app's own prom-client module: the metrics are built by the same copy as its registry. The
    // `key` label is the key's first segment (`seckill:42` → `seckill`): a few series per resource
    // class, never one per key (observability/grafana-dashboard.json groups by it).
    this.unregister = registerLockMetrics(this.registry, this.locks, {
      client: promClient,
      metricKey: (key) => key.split(':')[0],
    });
  }

  onApplicationShutdown(): void {
    this.unregister?.();
  }

  /** The exposition text of the app's registry. */
  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
