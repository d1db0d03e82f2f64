import Redis from 'ioredis';
import { startRedis } from '../test/support/redis-server';
(async () => {
  const server = await startRedis();
  const r = new Redis(server.port, { enableAutoPipelining: true });
  const sha = (await r.script('LOAD', 'return 1')) as string;
  const owner = 'Xk3j9QpLm2.' + 'a8Kd0s9Fj2Lq';
  const run = async (label: string, nAcq: number, nRel: number) => {
    const acqArgs = [owner, 'h8Kd0s9Fj2Lq', 10000, 86400000, '0', 33, 'Xk3j9QpLm2', '0'].slice(0, nAcq);
    const relArgs = [owner, 'h8Kd0s9Fj2Lq', 'lock:{bench:solo:1}:ch', 'PUBLISH', '0', '', 0].slice(0, nRel);
    const ops = 60000;
    let left = ops;
    const loop = async (i: number) => {
      const k = [`lock:{bench:solo:${i}}:m`, `lock:{bench:solo:${i}}:f`, `lock:{bench:solo:${i}}:w`];
      while (left-- > 0) {
        await (r as any).evalsha(sha, 3, k, acqArgs);
        await (r as any).evalsha(sha, 2, [k[0], k[2]], relArgs);
      }
    };
    left = 5000; await Promise.all(Array.from({ length: 64 }, (_, i) => loop(i)));
    left = ops;
    const c0 = process.cpuUsage(); const t0 = performance.now();
    await Promise.all(Array.from({ length: 64 }, (_, i) => loop(i)));
    const c = process.cpuUsage(c0); const ms = performance.now() - t0;
    console.log(`${label}: ${((c.user + c.system) / ops).toFixed(1)} µs CPU/op, ${Math.round(ops / (ms / 1000))} ops/s`);
  };
  for (let t = 0; t < 3; t++) {
    await run('8+7 args', 8, 7);
    await run('4+4 args', 4, 4);
    await run('2+1 args', 2, 1);
  }
  r.disconnect(); await server.stop();
})();
