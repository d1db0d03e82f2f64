/**
 * Specs whose assertions depend on processes getting the CPU on time: per-process fairness of 4
 * CPU-bound workers, and cron replicas that must run ≥ 90 % of ticks. They run with the fault suite, in
 * band (jest.faults.config.js), where no other spec competes for the 2 cores, and the parallel run
 * (jest.config.js) leaves them out.
 */
module.exports = [
  '<rootDir>/test/core/mutual-exclusion.spec.ts',
  '<rootDir>/test/nest/cron-replica-processes.spec.ts',
];
