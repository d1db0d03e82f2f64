import { redisInfo } from './redis-command';

/** Calls of EVAL + EVALSHA the server has run so far (INFO commandstats): "was a script sent?" */
export async function scriptCalls(port: number): Promise<number> {
  const stats = await redisInfo(port, 'commandstats');
  const calls = (name: string) => Number(/calls=(\d+)/.exec(stats[`cmdstat_${name}`] ?? '')?.[1] ?? 0);
  return calls('evalsha') + calls('eval');
}
