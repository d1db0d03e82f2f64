import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DistributedLock } from 'nestjs-distributed-lock';
import { SeatsService } from './seats.service';

interface BookSeat {
  seat: string;
  customer: string;
}

@Controller()
export class SeatsController {
  constructor(private readonly seats: SeatsService) {}

  /**
   * One booking per seat at a time. A second booking of a seat being booked waits 300 ms at most, then
   * the client gets `{ status: 'error', code: 'LOCKED', retryAfterMs }`.
   */
  @MessagePattern('book')
  @DistributedLock({ key: 'seat:{0.seat}', waitMs: 300 })
  book(@Payload() request: BookSeat) {
    return this.seats.book(request.seat, request.customer);
  }
}
