import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  ForbiddenException,
  Get,
  Header,
  HttpCode,
  Inject,
  type MessageEvent,
  Param,
  Post,
  Query,
  Req,
  ServiceUnavailableException,
  SetMetadata,
  Sse,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Observable } from 'rxjs';
import {
  LockRedisError,
  LockServiceClosedError,
  LockWrongTypeError,
  type ForceReleaseRecord,
  type LockInfo,
  type LockKind,
  type ListLocksResult,
} from '../core';
import { DistributedLockService } from '../nest/distributed-lock.service';
import { ConsoleEvents } from './console-events';
import { DISTRIBUTED_LOCK_CONSOLE_OPTIONS, type ResolvedConsoleOptions } from './console-options';
import { renderConsolePage } from './console-page';

/** Metadata on the console's controller class: a global guard can recognise the console by it. */
export const LOCK_CONSOLE_CONTROLLER = 'nestjs-distributed-lock:console';

/** Body of POST …/api/locks/:key/release. */
export interface ForceReleaseBody {
  reason?: unknown;
  kind?: unknown;
}

/**
 * The console's routes: a plain Nest controller, so the app's global guards, interceptors, pipes
 * and filters apply to it like to any other. register() subclasses it under the chosen path.
 */
export class LockConsoleController {
  private service?: DistributedLockService;

  constructor(
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
    @Inject(DISTRIBUTED_LOCK_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
    @Inject(ConsoleEvents) private readonly consoleEvents: ConsoleEvents,
  ) {}

  /** The page: one HTML document with its script and styles inline, no asset from the internet. */
  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  page(): string {
    return renderConsolePage(this.options);
  }

  /** Held locks of every process: `?match=&kind=&limit=&cursor=`. */
  @Get('api/locks')
  async list(
    @Query() query: Record<string, unknown>,
  ): Promise<ListLocksResult & { forceReleases: ForceReleaseRecord[] }> {
    const options = {
      ...(query.match !== undefined && { match: single(query.match, 'match') }),
      ...(query.kind !== undefined && { kind: single(query.kind, 'kind') as LockKind }),
      ...(query.limit !== undefined && { limit: wholeNumber(single(query.limit, 'limit'), 'limit') }),
      ...(query.cursor !== undefined && { cursor: single(query.cursor, 'cursor') }),
    };
    return this.run(async (s) => {
      const [page, forceReleases] = await Promise.all([s.list(options), s.forceReleases({ limit: 20 })]);
      return { ...page, forceReleases };
    });
  }

  /** One lock (`lock` null when free) and its latest force releases. */
  @Get('api/locks/:key')
  async show(
    @Param('key') key: string,
    @Query('kind') kind?: unknown,
  ): Promise<{ key: string; lock: LockInfo | null; forceReleases: ForceReleaseRecord[] }> {
    const options = kind === undefined ? {} : { kind: single(kind, 'kind') as LockKind };
    return this.run(async (s) => {
      const [lock, forceReleases] = await Promise.all([
        s.inspect(key, options),
        s.forceReleases({ key, limit: 20 }),
      ]);
      return { key, lock, forceReleases };
    });
  }

  /** Force release with `{ reason, kind? }`: 403 unless `allowForceRelease`. */
  @Post('api/locks/:key/release')
  @HttpCode(200)
  async release(
    @Param('key') key: string,
    @Body() body: ForceReleaseBody | undefined,
    @Req() request: unknown,
  ): Promise<{ key: string; released: boolean }> {
    if (!this.options.allowForceRelease) {
      throw new ForbiddenException('Force release is not allowed by this console (allowForceRelease: false)');
    }
    const { reason, kind } = body ?? {};
    if (typeof reason !== 'string' || reason.trim() === '') {
      throw new BadRequestException('A force release needs a reason: { "reason": "why" }');
    }
    const by = this.options.releasedBy?.(request) ?? `console ${remoteAddress(request)}`;
    return this.run(async (s) => ({
      key,
      released: await s.forceRelease(key, {
        reason,
        by,
        ...(kind !== undefined && kind !== '' && { kind: kind as LockKind }),
      }),
    }));
  }

  /** Server-sent events: this app's grants, releases, losses and force releases. */
  @Sse('api/events')
  events(): Observable<MessageEvent> {
    return this.consoleEvents.stream(this.lockService().events);
  }

  private lockService(): DistributedLockService {
    this.service ??= this.moduleRef.get(DistributedLockService, { strict: false });
    return this.service;
  }

  /** Bad input → 400, Redis down or closing → 503, a foreign key type → 409. */
  private async run<T>(work: (service: DistributedLockService) => Promise<T>): Promise<T> {
    try {
      return await work(this.lockService());
    } catch (err) {
      if (err instanceof TypeError || err instanceof RangeError) throw new BadRequestException(err.message);
      if (err instanceof LockRedisError || err instanceof LockServiceClosedError) {
        throw new ServiceUnavailableException(err.message);
      }
      if (err instanceof LockWrongTypeError) throw new ConflictException(err.message);
      throw err;
    }
  }
}

/** The console's controller class under `options.path`, with its own guards. */
export function consoleControllerFor(options: ResolvedConsoleOptions): Type<LockConsoleController> {
  class DistributedLockConsoleController extends LockConsoleController {}
  Controller(options.path)(DistributedLockConsoleController);
  SetMetadata(LOCK_CONSOLE_CONTROLLER, true)(DistributedLockConsoleController);
  if (options.guards.length > 0) UseGuards(...options.guards)(DistributedLockConsoleController);
  return DistributedLockConsoleController;
}

function single(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new BadRequestException(`${name} must be given once, as text`);
  return value;
}

function wholeNumber(value: string, name: string): number {
  if (!/^\d{1,7}$/.test(value)) throw new BadRequestException(`${name} must be a whole number`);
  return Number(value);
}

function remoteAddress(request: unknown): string {
  const r = request as { ip?: unknown; socket?: { remoteAddress?: unknown } };
  const ip = typeof r.ip === 'string' ? r.ip : r.socket?.remoteAddress;
  return typeof ip === 'string' ? ip : 'unknown';
}
