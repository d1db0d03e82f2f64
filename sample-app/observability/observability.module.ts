import { Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { DistributedLockHealthModule } from '../../lib/terminus';
import { HealthController } from './health.controller';
import { METRICS_REGISTRY, MetricsController } from './metrics.controller';

/** `/health` (Terminus) and `/metrics` (prom-client, own registry). Needs the global lock module. */
@Module({
  imports: [DistributedLockHealthModule],
  controllers: [HealthController, MetricsController],
  providers: [{ provide: METRICS_REGISTRY, useFactory: () => new Registry() }],
})
export class ObservabilityModule {}
