import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import { LOCK_CONSOLE_CONTROLLER } from '../../lib/console';

/** Who may use the lock console (HTTP Basic credentials). */
export interface OperatorCredentials {
  user: string;
  password: string;
}

/** Injection token of the OperatorCredentials. */
export const OPERATOR_CREDENTIALS = Symbol('OPERATOR_CREDENTIALS');

/**
 * A global guard (APP_GUARD) that protects the lock console: the console is an ordinary Nest
 * controller, so this guard runs before every one of its routes — the page, the JSON API, the SSE
 * stream and force release. Other routes pass. HTTP Basic keeps the sample short (a browser asks for
 * the password once and sends it with the page's fetch and EventSource requests); a real app puts
 * its own auth here (a session, a JWT with an "operator" role...).
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(OPERATOR_CREDENTIALS) private readonly credentials: OperatorCredentials,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (!this.reflector.get<boolean>(LOCK_CONSOLE_CONTROLLER, context.getClass())) return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    const operator = this.operatorOf(request.headers.authorization);
    if (!operator) {
      throw new UnauthorizedException({ statusCode: 401, message: 'Operator credentials required' });
    }
    (request as { operator?: string }).operator = operator;
    return true;
  }

  /** The operator's name when the Basic credentials match, else undefined. */
  private operatorOf(header: string | undefined): string | undefined {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
    if (!match) return undefined;
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
    const same = (a: string, b: string) =>
      a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
    const ok = colon > 0 && same(user, this.credentials.user) && same(password, this.credentials.password);
    return ok ? user : undefined;
  }
}
