export * from './distributed-lock.decorator';
