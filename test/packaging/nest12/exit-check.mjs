// Run as a child process by the smoke test: start the app, take one lock through a route, close
// the app — and then do nothing. The process must end on its own (no timer, socket or subscription left).
import { startSmokeApp } from './smoke-app.mjs';

const { app, url } = await startSmokeApp(process.argv[2]);
const res = await fetch(`${url}/seckill/exit`);
if (res.status !== 200) throw new Error(`unexpected status ${res.status}`);
await app.close();
console.log('closed');
