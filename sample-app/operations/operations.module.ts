import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { DistributedLockConsoleModule } from '../../lib/console';
import { OPERATOR_CREDENTIALS, OperatorGuard, type OperatorCredentials } from './operator.guard';
import { BasicAuthChallengeFilter } from './unauthorized.filter';

/** Where the sample mounts the lock console. */
export const LOCK_CONSOLE_PATH = 'locks';

/**
 * The operator's view: the lock console at /locks (force release allowed, recorded as the operator
 * who signed in), behind OperatorGuard, registered as a global guard the way an app registers its
 * own auth.
 */
@Module({})
export class OperationsModule {
  /** Credentials default to LOCK_CONSOLE_USER / LOCK_CONSOLE_PASSWORD (sample defaults: ops / ops). */
  static forRoot(credentials: OperatorCredentials = credentialsFromEnv()): DynamicModule {
    return {
      module: OperationsModule,
      imports: [
        DistributedLockConsoleModule.register({
          path: LOCK_CONSOLE_PATH,
          allowForceRelease: true,
          releasedBy: (request) => (request as { operator?: string }).operator,
        }),
      ],
      providers: [
        { provide: OPERATOR_CREDENTIALS, useValue: credentials },
        { provide: APP_GUARD, useClass: OperatorGuard },
        { provide: APP_FILTER, useClass: BasicAuthChallengeFilter },
      ],
    };
  }
}

/** The console's credentials from the environment. */
export function credentialsFromEnv(env: NodeJS.ProcessEnv = process.env): OperatorCredentials {
  return { user: env.LOCK_CONSOLE_USER || 'ops', password: env.LOCK_CONSOLE_PASSWORD || 'ops' };
}
