/*
 * observability/alerts.yml through Debian's promtool: the rules load (`promtool check rules`), and the unit
 * tests of observability/alerts.test.yml pass (`promtool test rules`): each alert fires on the condition it
 * names (a loss after a Redis restart, renewal failures, a high busy ratio, slow waits) and stays quiet
 * otherwise. test/faults/prometheus-dashboard.spec.ts evaluates the same expressions on a live Prometheus.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { promisify } from 'util';

const run = promisify(execFile);
const dir = path.resolve(__dirname, '..', '..', 'observability');
const PROMTOOL = process.env.PROMTOOL_BIN ?? 'promtool';

describe('alert rules (promtool)', () => {
  it('load, and fire exactly where alerts.test.yml says', async () => {
    const checked = await run(PROMTOOL, ['check', 'rules', 'alerts.yml'], { cwd: dir });
    expect(checked.stdout).toMatch(/SUCCESS: 4 rules found/);
    const tested = await run(PROMTOOL, ['test', 'rules', 'alerts.test.yml'], { cwd: dir });
    console.log(`promtool test rules alerts.test.yml:\n${tested.stdout}`);
    expect(tested.stdout).toMatch(/SUCCESS/);
  });

  it('fails a unit test whose expectation is wrong (the check can fail)', async () => {
    // The loss test expects an alert at 7m; asking promtool whether it stays quiet then must fail.
    const wrong = path.join(os.tmpdir(), `alerts-wrong-${process.pid}.test.yml`);
    fs.writeFileSync(
      wrong,
      [
        `rule_files: ['${path.join(dir, 'alerts.yml')}']`,
        'evaluation_interval: 1m',
        'tests:',
        '  - interval: 1m',
        '    input_series:',
        `      - series: 'distributed_lock_lost_total{job="app",instance="a",kind="mutex",reason="expired",key="k"}'`,
        "        values: '_ _ _ _ _ _ 1 1 1'",
        '    alert_rule_test:',
        '      - eval_time: 7m',
        '        alertname: DistributedLockLost',
        '        exp_alerts: []',
        '',
      ].join('\n'),
    );
    try {
      await expect(run(PROMTOOL, ['test', 'rules', wrong])).rejects.toMatchObject({
        stderr: expect.stringMatching(/FAILED:[\s\S]*alertname: DistributedLockLost, time: 7m/),
      });
    } finally {
      fs.rmSync(wrong, { force: true });
    }
  });
});
