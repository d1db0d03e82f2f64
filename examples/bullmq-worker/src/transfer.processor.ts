import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { DistributedLockService } from 'nestjs-distributed-lock';
import { LedgerService } from './ledger.service';

interface Deposit {
  account: string;
  amount: number;
}

/**
 * Ten jobs at a time in each worker process. Jobs for one account run one at a time across all
 * workers: the account's lock is held from the read of its balance to the write.
 */
@Processor('transfers', { concurrency: 10 })
export class TransferProcessor extends WorkerHost {
  constructor(
    private readonly locks: DistributedLockService,
    private readonly ledger: LedgerService,
  ) {
    super();
  }

  async process(job: Job<Deposit>): Promise<number> {
    const { account, amount } = job.data;
    // Waits up to 30 s for the account; a busy lock past that fails the job and BullMQ retries it.
    return this.locks.using(`account:${account}`, { waitMs: 30_000 }, async () => {
      const balance = await this.ledger.balance(account);
      await this.ledger.write(account, balance + amount);
      return balance + amount;
    });
  }
}
