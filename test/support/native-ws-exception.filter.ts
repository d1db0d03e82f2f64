import { ArgumentsHost, Catch } from '@nestjs/common';
import { BaseWsExceptionFilter, WsException } from '@nestjs/websockets';

/**
 * Sends a WsException to a native WebSocket client (@nestjs/platform-ws) as the message
 * `{ event: 'exception', data }`: Nest 11's BaseWsExceptionFilter emits the `exception` event with
 * `client.emit()`, which reaches socket.io clients only (nestjs/nest#9056). The recipe in
 * docs/TRANSPORTS.md.
 */
@Catch(WsException)
export class NativeWsExceptionFilter extends BaseWsExceptionFilter {
  override catch(exception: WsException, host: ArgumentsHost): void {
    const client = host.switchToWs().getClient<{ send?: (data: string) => void; nsp?: unknown }>();
    if (typeof client.send === 'function' && client.nsp === undefined) {
      client.send(JSON.stringify({ event: 'exception', data: exception.getError() }));
      return;
    }
    super.catch(exception, host);
  }
}
