/** Imported first by a worker: shifts Date.now (read by cron and luxon) by SKEW_MS before Nest loads. */
const skewMs = Number(process.env.SKEW_MS ?? '0');
if (skewMs !== 0) {
  const realNow = Date.now.bind(Date);
  Date.now = () => realNow() + skewMs;
}

export const CLOCK_SKEW_MS = skewMs;
