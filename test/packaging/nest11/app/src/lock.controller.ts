// The route every built-app cell calls: GET /hold/:id takes the lock `x:<id>` through the decorator and
// keeps it until GET /release/:id; a second GET /hold/:id meanwhile must answer 423 (waitMs: 0).
// The service is injected with @Inject: tsx and esbuild emit no decorator metadata.
import { Controller, Get, Inject, NotFoundException, Param } from '@nestjs/common';
import { DistributedLock, DistributedLockService } from 'nestjs-distributed-lock';

const gates = new Map<string, () => void>();

@Controller()
export class LockController {
  constructor(@Inject(DistributedLockService) private readonly locks: DistributedLockService) {}

  @Get('hold/:id')
  @DistributedLock({ key: 'x:{0}', waitMs: 0 })
  async hold(@Param('id') id: string): Promise<{ id: string; fencingToken?: number }> {
    const lock = this.locks.current(`x:${id}`);
    await new Promise<void>((resolve) => gates.set(id, resolve));
    return { id, fencingToken: lock?.fencingToken };
  }

  @Get('held/:id')
  async held(@Param('id') id: string): Promise<{ held: boolean }> {
    return { held: gates.has(id) };
  }

  @Get('release/:id')
  async release(@Param('id') id: string): Promise<{ released: true }> {
    const open = gates.get(id);
    if (!open) throw new NotFoundException(`nothing holds ${id}`);
    gates.delete(id);
    open();
    return { released: true };
  }
}
