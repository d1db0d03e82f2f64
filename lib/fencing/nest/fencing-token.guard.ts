import {
  BadRequestException,
  ConflictException,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Fence } from '../fence';
import { FenceLedger } from '../http/fence-ledger';
import { FENCING_TOKEN_HEADER, readFencingHeaders, type IncomingHeaders } from '../http/fencing-headers';
import { StaleFenceError } from '../stale-fence.error';

/** Names the resource a request writes, from the request (e.g. `(req) => 'stock:' + req.params.sku`). */
export type FencedResourceResolver = (request: any) => string;

const FENCED_RESOURCE = 'nestjs-distributed-lock:fenced-resource';

/** Options of {@link FencedResource}. */
export interface FencedResourceOptions {
  /** Refuse requests without the header (428 Precondition Required). Default true. */
  required?: boolean;
}

/**
 * Marks a handler (or a controller) whose requests carry `X-Fencing-Token`/`X-Fencing-Owner` for
 * the resource `resolve` names; FencingTokenGuard admits them through the FenceLedger.
 */
export function FencedResource(
  resolve: FencedResourceResolver,
  options: FencedResourceOptions = {},
): MethodDecorator & ClassDecorator {
  if (typeof resolve !== 'function')
    throw new TypeError('@FencedResource(resolve): resolve must be a function');
  return SetMetadata(FENCED_RESOURCE, { resolve, required: options.required ?? true });
}

/** The request property where the guard leaves the admitted fence, for the handler's own fenced writes. */
export const ADMITTED_FENCE = Symbol('admittedFence');

/**
 * Rejects requests whose fencing token is stale for their resource: 409 Conflict (`code:
 * 'STALE_FENCE'`, with the stored fence). A malformed header is a 400, a missing one a 428 unless
 * the resource is not `required`. Admitted fences are recorded in the FenceLedger the app provides
 * (`{ provide: FenceLedger, useValue: new RedisFencedStore(redis) }`) and left on the request under
 * ADMITTED_FENCE. Handlers without `@FencedResource` pass through.
 */
@Injectable()
export class FencingTokenGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(FenceLedger) private readonly ledger: FenceLedger,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const meta = this.reflector.getAllAndOverride<{ resolve: FencedResourceResolver; required: boolean }>(
      FENCED_RESOURCE,
      [context.getHandler(), context.getClass()],
    );
    if (!meta || context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<{ headers: IncomingHeaders } & Record<symbol, Fence>>();
    const resource = meta.resolve(request);
    let fence: Fence | undefined;
    try {
      fence = readFencingHeaders(request.headers, resource);
    } catch (error) {
      throw new BadRequestException((error as Error).message);
    }
    if (!fence) {
      if (!meta.required) return true;
      throw new HttpException(
        `${FENCING_TOKEN_HEADER} is required for this resource`,
        HttpStatus.PRECONDITION_REQUIRED,
      );
    }
    try {
      await this.ledger.admit(resource, fence);
    } catch (error) {
      if (!(error instanceof StaleFenceError)) throw error;
      throw new ConflictException({
        statusCode: HttpStatus.CONFLICT,
        code: 'STALE_FENCE',
        message: error.message,
        storedFence: error.storedFence === null ? null : String(error.storedFence),
      });
    }
    request[ADMITTED_FENCE] = fence;
    return true;
  }
}
