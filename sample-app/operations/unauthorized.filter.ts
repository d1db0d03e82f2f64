import { type ArgumentsHost, Catch, type ExceptionFilter, UnauthorizedException } from '@nestjs/common';

/**
 * Adds `WWW-Authenticate: Basic` to 401 answers, so a browser opening the console asks for the
 * operator's password (Express and Fastify replies alike).
 */
@Catch(UnauthorizedException)
export class BasicAuthChallengeFilter implements ExceptionFilter {
  catch(exception: UnauthorizedException, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<{
      status?: (code: number) => unknown;
      code?: (code: number) => unknown;
      header?: (name: string, value: string) => unknown;
      setHeader?: (name: string, value: string) => unknown;
      send: (body: unknown) => unknown;
    }>();
    if (reply.setHeader) reply.setHeader('WWW-Authenticate', 'Basic realm="locks", charset="UTF-8"');
    else reply.header?.('WWW-Authenticate', 'Basic realm="locks", charset="UTF-8"');
    if (reply.code) reply.code(401);
    else reply.status?.(401);
    reply.send(exception.getResponse());
  }
}
