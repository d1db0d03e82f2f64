import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';

/**
 * Lets through requests that carry `Authorization: Bearer <OPERATOR_TOKEN>`. A stand-in for the app's
 * own auth: the console is a regular Nest controller, so any guard works.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const token = process.env.OPERATOR_TOKEN;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    if (!token || request.headers.authorization !== `Bearer ${token}`) throw new UnauthorizedException();
    return true;
  }
}
